"""The sport tournament («турнир»): entries, the draw with the team rule, qualification, the
bracket of battles of three, the final, places and statistics (regulation section 3).

A pure package like the rules engines: `entries` (players and the CSV import), `stages`
(the arithmetic as data), `draw` (the lot), `state`, `commands`, `folds`, `views`, and `game`,
the engine registered as ``"tournament"``. The library API, for the admin pages, the CLI
and other boxes: commands in (`game.decide`), events out, `views.view(state, role)` for the
bracket. See docs/tournament.md.
"""
