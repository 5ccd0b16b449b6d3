"""The rules of «Своя игра», pure: the protocol every engine speaks (`protocol`), the
engines by name (`registry`), buzzer arbitration (`arbiter`), and the two engines side by
side, `tv` (the TV game) and `battle` (the sport battle), built the same way."""
