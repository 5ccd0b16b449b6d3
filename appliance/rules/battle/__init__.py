"""Sport «Своя игра»: the battle engine («бой») of the tournament regulation.

Built like its sibling `appliance.rules.tv`: `game` is the engine module (NAME = "battle":
decide with its catch-up on passed deadlines, evolve), `setup` starts a battle (themes given
or taken from a package by stage), `state` holds it, `commands` validate (one handler per
command; the queue is `commands._judge` over `arbiter.next_in_queue`; the host's corrections
in `corrections`, the argument checks in `checks`), `folds` apply (one
fold per event, undo by the saved state), `actions` list what is legal, `deadlines` say when
to wake, `views` and `summary` show it.
"""
