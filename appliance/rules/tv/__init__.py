"""The TV game «Своя игра»: board, cat in the bag, auction, final round and shootout.

`game` is the engine module (NAME = "tv"); the other modules are its pure helpers.
"""
