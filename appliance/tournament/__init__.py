"""The tournament on a running box: `director` (the shell over the game loop) and `cli`
(`svoyak tournament`). The pure engine is `appliance.rules.tournament`."""
