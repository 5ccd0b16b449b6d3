"""Svoyak's domain core: rules engines, buzzer arbitration, packages, the event log and the
game loop. Pure Python; it imports neither `gpio` nor `webui` and reads no clock or pin
inside the rules: time and presses arrive as data."""

__version__ = "0.1.0"
