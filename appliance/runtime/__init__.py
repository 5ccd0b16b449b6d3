"""Running games: the event log (`store`), one game stepped command by command
(`running`), the game-loop thread (`loop`), scripts (`replay`, `cli`) and the systemd
watchdog (`systemd`). Time arrives as data here too: the loop is handed its clock."""
