#!/bin/sh
# Test box: phones 1..N, each a network namespace (phoneK) with a virtual radio of its own,
# made inside it (phone.py radio), so the box's NetworkManager never sees the phones'
# radios. Idempotent: a phone already made is kept.
set -eu
count=$1
k=1
while [ "$k" -le "$count" ]; do
  if [ ! -e "/run/netns/phone$k" ]; then
    ip netns add "phone$k"
    ip -n "phone$k" link set lo up
    ip netns exec "phone$k" python3 /usr/local/lib/svoyak-test/phone.py radio
  fi
  k=$((k + 1))
done
