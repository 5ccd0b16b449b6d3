"""The web screens: host tablet, TV board, player phones, admin."""
