#!/usr/bin/env bash
# Install the system tools the provisioning, image-build, arm64, rooms and power-loss tests need
# (Debian/Ubuntu).
# The rooms tests start their own Mosquitto on loopback; the packaged service is not used.
# Idempotent and silent when everything is already there; apt-get only for what is missing.
set -euo pipefail

# command -> Debian package that provides it
declare -A tools=(
  [shellcheck]=shellcheck
  [debootstrap]=debootstrap
  [sfdisk]=fdisk
  [mkfs.ext4]=e2fsprogs
  [resize2fs]=e2fsprogs
  [mkfs.vfat]=dosfstools
  [losetup]=mount
  [xz]=xz-utils
  [systemctl]=systemd
  [mosquitto]=mosquitto
  [mosquitto_passwd]=mosquitto
  [systemd-analyze]=systemd
  [nmcli]=network-manager          # its offline keyfile parser (nmcli --offline)
  [qemu-aarch64-static]=qemu-user-static   # the arm64 test
  [gcc]=build-essential            # the power-loss test builds its disk model (tests/sync_snapshot.c)
)
export PATH="$PATH:/usr/sbin:/sbin"
need=()
for tool in "${!tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || need+=("${tools[$tool]}")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "test-deps: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # NetworkManager is wanted for its parser only: no service may start on this machine
  # (a policy-rc.d for the install, unless one is already there).
  policy=/usr/sbin/policy-rc.d
  own_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    own_policy=1
  fi
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
  [ -z "$own_policy" ] || $sudo rm -f "$policy"
fi

# arm64 binaries through qemu: register the handler with the kernel when no init system did
# (a container, CI). F ("fix binary") opens the interpreter now, so it works in chroots.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  [ -e "$binfmt/register" ] || $sudo mount -t binfmt_misc binfmt_misc "$binfmt"
  $sudo sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf > $binfmt/register"
fi
