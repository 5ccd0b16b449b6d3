#!/usr/bin/env bash
# Install what `make test-box` needs on a Debian bookworm machine (idempotent, quiet when
# everything is there): QEMU, Debian's own kernel packages for the guest, the kernel's
# headers and source (the virtual GPIO chip, gpio-sim, is built from them), busybox for the
# guest's initramfs. The guest's kernel and busybox are only downloaded (apt-get download)
# and unpacked by the harness: nothing is installed as this machine's own kernel.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
KVER=${SVOYAK_BOX_KERNEL:-6.1.0-57-amd64}
CACHE=${1:-${SVOYAK_TEST_CACHE:-/var/cache/svoyak-test}/box}

declare -A tools=(
  [qemu-system-x86_64]=qemu-system-x86
  [qemu-img]=qemu-utils
  [mkfs.ext4]=e2fsprogs
  [sfdisk]=fdisk
  [cpio]=cpio
  [gcc]=build-essential
  [make]=make
)
need=()
for tool in "${!tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || need+=("${tools[$tool]}")
done
[ -e "/usr/src/linux-headers-$KVER/Makefile" ] || need+=("linux-headers-$KVER")
compgen -G "/usr/src/linux-source-6.1.tar.*" >/dev/null || need+=(linux-source-6.1)
updated=""
apt_update() { [ -n "$updated" ] || { apt-get update -q >/dev/null; updated=1; }; }
if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "test-box-deps: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt_update
  apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

# The guest's own packages, as .deb files in the cache (the harness unpacks them).
mkdir -p "$CACHE/debs"
for pkg in "linux-image-$KVER" busybox-static; do
  if ! compgen -G "$CACHE/debs/${pkg}_*.deb" >/dev/null; then
    apt_update
    echo "test-box-deps: downloading $pkg" >&2
    (cd "$CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null)
  fi
done
