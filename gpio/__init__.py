"""The hardware adapter: wired player buttons and the lamp over gpiozero."""
