"""The rooms link: several room boxes and one director's box playing one tournament,
linked through an MQTT broker (Mosquitto). An adapter like `gpio/` and `webui/`: it does
network and file I/O; the battles and the bracket stay in the pure domain. See
docs/rooms.md for the topic tree, the payloads and the guarantees."""
