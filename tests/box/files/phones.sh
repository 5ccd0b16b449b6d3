#!/bin/sh
# Test box: phones 1..N, each a network namespace (phoneK) holding a virtual radio of its
# own. The radio is made in the box's namespace (radios made in one namespace are the ones
# that hear each other) and moved into the phone's at once. Idempotent.
set -eu
count=$1
k=1
while [ "$k" -le "$count" ]; do
  if [ ! -e "/run/netns/phone$k" ]; then
    ip netns add "phone$k"
    ip -n "phone$k" link set lo up
    phy=$(python3 /usr/local/lib/svoyak-test/phone.py radio | sed 's/.*"phy": "\([^"]*\)".*/\1/')
    iw phy "$phy" set netns name "phone$k"
  fi
  k=$((k + 1))
done
