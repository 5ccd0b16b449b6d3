#!/bin/sh
# Test box: the box's own Wi-Fi radio (mac80211_hwsim, a module of Debian's kernel), wlan0,
# like a Pi's built-in chip. It keeps the kernel's default rfkill state: blocked, by
# rfkill.default_state=0 on the test kernel's command line, as a fresh Raspberry Pi OS card
# boots. The phones' radios are made later, each in its phone's namespace (phones.sh).
set -eu
modprobe mac80211_hwsim radios=1
n=0
while [ ! -e /sys/class/net/wlan0 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
echo "radios: wlan0 for the box"
