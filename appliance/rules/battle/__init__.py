"""Sport «Своя игра»: the battle engine («бой») of the tournament regulation."""
