#!/bin/sh
# Test box: the Pi's GPIO header as a virtual chip (gpio-sim, built by tests/box/gpiosim.py).
# One bank of 58 lines, as the Pi 4's gpiochip0, line N being GPIO N; every line pulled up,
# as a button wired to ground between presses reads through the box's internal pull-up.
# The harness presses a button by pulling its line down (sim_gpioN/pull in sysfs) and
# reads the lamp from sim_gpioN/value.
set -eu
modprobe gpio-sim   # configfs first (the module depends on it)
cfg=/sys/kernel/config
mountpoint -q "$cfg" || mount -t configfs configfs "$cfg"
chip=$cfg/gpio-sim/svoyak
mkdir "$chip" "$chip/bank0"
echo 58 > "$chip/bank0/num_lines"
echo pinctrl-bcm2711 > "$chip/bank0/label"
echo 1 > "$chip/live"
sys=/sys/devices/platform/$(cat "$chip/dev_name")/$(cat "$chip/bank0/chip_name")
for pull in "$sys"/sim_gpio*/pull; do echo pull-up > "$pull"; done
ln -sfn "$sys" /run/svoyak-test-gpio
echo "gpio-sim: $(cat "$chip/bank0/chip_name") at $sys"
