#!/usr/bin/env bash
# Build the Svoyak SD-card image from the official Raspberry Pi OS Lite (64-bit) image.
#   sudo image-build/build.sh path/to/raspios-bookworm-arm64-lite.img.xz [OUT_DIR]
# (or `make image BASE=...`). Needs root, qemu-user-static with binfmt (on a non-arm64
# host), sfdisk, e2fsprogs, xz and the project's .venv with Ansible (make test builds it).
# Settings: ROOT_GROW_MIB, ROOT_SLACK_MIB, DATA_MIB, XZ_LEVEL, and SVOYAK_VARS (JSON for
# the playbook, which wins over svoyak_on_pi=true and the rest).
# Writes OUT_DIR/svoyak-VERSION.img.xz and its .sha256. See docs/appliance.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
project=$(dirname "$here")
# shellcheck source=image-build/lib.sh
. "$here/lib.sh"

ROOT_GROW_MIB=${ROOT_GROW_MIB:-3072}   # room for the packages while provisioning
ROOT_SLACK_MIB=${ROOT_SLACK_MIB:-512}  # free space left on the root after shrinking
DATA_MIB=${DATA_MIB:-256}              # the data partition as shipped; grown at first boot
DATA_LABEL=svoyak-data
ANSIBLE_PLAYBOOK=${ANSIBLE_PLAYBOOK:-$project/.venv/bin/ansible-playbook}
SVOYAK_VARS=${SVOYAK_VARS:-{\}}        # more settings as JSON, e.g. '{"svoyak_ssh_enabled": true}'
XZ_LEVEL=${XZ_LEVEL:-6}

die() { echo "build.sh: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: build.sh BASE.img.xz [OUT_DIR]"
base=$(readlink -f "$1")
out=$(readlink -m "${2:-$project/build/image}")
[ -f "$base" ] || die "no base image at $1 (download Raspberry Pi OS Lite 64-bit, see docs/appliance.md)"
[ "$(id -u)" -eq 0 ] || die "run as root (loop devices, mounts, chroot)"
for tool in sfdisk losetup e2fsck resize2fs mkfs.ext4 xz sha256sum unshare python3; do
  command -v "$tool" >/dev/null || die "missing $tool (apt-get install fdisk e2fsprogs xz-utils util-linux)"
done
[ -x "$ANSIBLE_PLAYBOOK" ] || die "no $ANSIBLE_PLAYBOOK: run 'make test' or 'make .venv/.installed' first"

# Mounts live in a private namespace: they vanish with this process whatever happens.
if [ -z "${SVOYAK_IN_NAMESPACE:-}" ]; then
  export SVOYAK_IN_NAMESPACE=1
  exec unshare --mount --propagation private "$0" "$@"
fi

version=$(python3 -c 'import re,sys; print(re.search(r"^version = \"(.+)\"", open(sys.argv[1]).read(), re.M)[1])' "$project/pyproject.toml")
work="$out/work"
img="$work/svoyak.img"
root="$work/root"
mkdir -p "$work" "$root"
loops=()
cleanup() {
  set +e
  for m in $(findmnt -rn -o TARGET | grep "^$root" | sort -r); do umount -l "$m"; done
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
}
trap cleanup EXIT

echo "== wheel"
rm -rf "$work/dist"
"$project/.venv/bin/pip" wheel -q --no-deps -w "$work/dist" "$project"
wheel=$(ls "$work"/dist/svoyak-*.whl)

echo "== copy and enlarge $base"
xz -dc "$base" > "$img"
[ "$(part_count "$img")" -eq 2 ] || die "expected the two partitions of Raspberry Pi OS (boot, root)"
grow_partition "$img" 2 "$ROOT_GROW_MIB"
resize_fs "$img" 2

echo "== mount"
loops+=("$(part_loop "$img" 2)")
mount "${loops[-1]}" "$root"
loops+=("$(part_loop "$img" 1)")
mkdir -p "$root/boot/firmware"
mount "${loops[-1]}" "$root/boot/firmware"
mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# An arm64 image on another architecture runs through qemu-user-static's binfmt handler.
chroot "$root" /bin/true 2>/dev/null ||
  die "the image's binaries cannot run here: apt-get install qemu-user-static binfmt-support"
# Name resolution for apt and pip; the box's own resolv.conf comes back afterwards.
cp -a "$root/etc/resolv.conf" "$work/resolv.conf.orig" 2>/dev/null || true
rm -f "$root/etc/resolv.conf"
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"   # never start services
chmod 755 "$root/usr/sbin/policy-rc.d"

echo "== provision (site.yml through the chroot connection)"
(cd "$project/provisioning" && env -i PATH="/usr/sbin:/usr/bin:/sbin:/bin" HOME="$HOME" LANG=C.UTF-8 \
  "$ANSIBLE_PLAYBOOK" -i "$root," -c community.general.chroot site.yml \
  -e "svoyak_wheel=$wheel" -e "svoyak_data_device=LABEL=$DATA_LABEL" -e svoyak_on_pi=true \
  -e "$SVOYAK_VARS")

echo "== first boot"
install -m 0755 "$here/files/svoyak-grow-data" "$root/usr/local/sbin/svoyak-grow-data"
install -m 0644 "$here/files/svoyak-grow-data.service" "$root/etc/systemd/system/"
systemctl --root="$root" enable svoyak-grow-data.service
# Raspberry Pi OS's own first boot would try to grow the root (no longer the last
# partition) and asks for a user on tty1, where the kiosk runs.
sed -i -E 's# ?init=/usr/lib/raspberrypi-sys-mods/firstboot##; s# ?init=/usr/lib/raspi-config/init_resize\.sh##' \
  "$root/boot/firmware/cmdline.txt"
if [ -e "$root/lib/systemd/system/userconfig.service" ]; then
  systemctl --root="$root" mask userconfig.service
fi
# A fresh machine-id per box: systemd makes one at first boot.
: > "$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

echo "== clean"
chroot "$root" apt-get clean
rm -rf "$root/root/.cache" "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf"
if [ -e "$work/resolv.conf.orig" ] || [ -L "$work/resolv.conf.orig" ]; then
  mv "$work/resolv.conf.orig" "$root/etc/resolv.conf"
fi
fstrim "$root" 2>/dev/null || true   # zeroes freed blocks: a much smaller .xz
cleanup
loops=()

echo "== shrink, add the data partition"
shrink_partition "$img" 2 "$ROOT_SLACK_MIB"
n=$(append_partition "$img" "$DATA_MIB")
make_data_fs "$img" "$n" "$DATA_LABEL"

echo "== compress"
name="svoyak-$version.img"
xz -T0 "-$XZ_LEVEL" -c "$img" > "$out/$name.xz"
(cd "$out" && sha256sum "$name.xz" > "$name.xz.sha256")
rm -rf "$work"
echo "$out/$name.xz"
