"""`svoyak tournament` (`cli`). The pure engine is `appliance.rules.tournament`; the shell
over the game loop on a running box is `appliance.runtime.tournament`."""
