"""The TV game «Своя игра»: board, cat in the bag, auction, final round and shootout.

Built like its sibling `appliance.rules.battle`: `game` is the engine module (NAME = "tv":
decide with its automatic follow-ups, evolve with undo), `setup` starts a game, `state`
holds it, `commands` validate (one handler per command; the host's corrections in
`corrections`, the argument checks in `checks`), `folds` apply (one fold per event),
`actions` list what is legal, `deadlines` say when to wake, `views` and `summary` show it.
The TV-only helpers: `presets` (rule-sets as data), `board` (cells and values), `auction`
(the bidding protocol), `final` (final round and shootout).
"""
