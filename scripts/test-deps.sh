#!/usr/bin/env bash
# Install the system tools the provisioning, image-build and rooms tests need (Debian/Ubuntu).
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
)
export PATH="$PATH:/usr/sbin:/sbin"
need=()
for tool in "${!tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || need+=("${tools[$tool]}")
done
[ ${#need[@]} -eq 0 ] && exit 0

mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "test-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
