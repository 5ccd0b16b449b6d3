"""The composition root: the `svoyak` command (`cli`) and the box it serves (`serve`).

The only package that imports both adapters, `gpio` and `webui`; they never import each
other, and `appliance` (the domain) imports neither. `serve.build` wires the event store,
the game loop, the buttons and the web UI over one data directory."""
