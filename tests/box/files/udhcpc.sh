#!/bin/sh
# busybox udhcpc's event script for a phone of the test box (phone.py): the leased address on
# the phone's interface, a default route through the box, the lease as JSON (phone.py asks
# the lease's DNS server itself).
# shellcheck disable=SC2154  # interface, ip, mask, router, dns: set by udhcpc
case "$1" in
  deconfig) ip addr flush dev "$interface" ;;
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/${mask:-24}" dev "$interface"
    [ -z "$router" ] || ip route replace default via "${router%% *}" dev "$interface"
    printf '{"ip": "%s", "router": "%s", "dns": "%s"}\n' "$ip" "${router%% *}" "$dns" > "$LEASE"
    ;;
esac
exit 0
