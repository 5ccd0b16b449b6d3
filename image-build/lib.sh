#!/usr/bin/env bash
# Partition and file-system steps of the image build, on a disk image file. Sourced by
# build.sh and by tests/test_image_build.py (which runs them on a small synthetic image).
# Sizes are in 512-byte sectors unless a name says MiB. Loop devices are attached by offset
# and size (losetup -o/--sizelimit), so no partition scanning or udev is needed.

SECTOR=512
ALIGN=8192   # 4 MiB: what Raspberry Pi OS and SD cards' erase blocks like

# part_field IMG N FIELD -> start|size of partition N (by its order in the table)
part_field() {
  sfdisk --json "$1" | python3 -c '
import json, sys
parts = json.load(sys.stdin)["partitiontable"]["partitions"]
print(parts[int(sys.argv[1]) - 1][sys.argv[2]])' "$2" "$3"
}
# part_count IMG -> how many partitions
part_count() {
  sfdisk --json "$1" | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["partitiontable"]["partitions"]))'
}
part_start() { part_field "$1" "$2" start; }
part_size() { part_field "$1" "$2" size; }
part_end() { echo $(( $(part_start "$1" "$2") + $(part_size "$1" "$2") )); }   # first free sector

# part_loop IMG N -> a loop device over partition N (detach with losetup -d)
part_loop() {
  local img=$1 n=$2
  losetup --find --show --offset $(( $(part_start "$img" "$n") * SECTOR )) \
    --sizelimit $(( $(part_size "$img" "$n") * SECTOR )) "$img"
}

# grow_partition IMG N MIB: make the file MIB larger and partition N (the last) fill it.
grow_partition() {
  local img=$1 n=$2 mib=$3
  truncate -s +"${mib}M" "$img"
  echo ", +" | sfdisk --quiet --no-reread --no-tell-kernel -N "$n" "$img"
}

# resize_fs IMG N [BLOCKS]: check, then fit the ext4 file system of partition N to the
# partition (no BLOCKS) or shrink it to its minimum (BLOCKS = min).
resize_fs() {
  local img=$1 n=$2 how=${3:-} dev rc=0
  dev=$(part_loop "$img" "$n")
  e2fsck -fy "$dev" >/dev/null || rc=$?
  if [ "$rc" -le 1 ]; then   # 1 = errors corrected
    rc=0
    if [ "$how" = min ]; then
      resize2fs -M "$dev" >/dev/null 2>&1 || rc=$?
    else
      resize2fs "$dev" >/dev/null 2>&1 || rc=$?
    fi
  fi
  losetup -d "$dev"
  return "$rc"
}

# fs_sectors IMG N -> sectors used by the ext4 file system of partition N
fs_sectors() {
  local img=$1 n=$2 dev count bsize
  dev=$(part_loop "$img" "$n")
  count=$(dumpe2fs -h "$dev" 2>/dev/null | awk -F: '/^Block count/ {gsub(/ /, "", $2); print $2}')
  bsize=$(dumpe2fs -h "$dev" 2>/dev/null | awk -F: '/^Block size/ {gsub(/ /, "", $2); print $2}')
  losetup -d "$dev"
  echo $(( count * bsize / SECTOR ))
}

# shrink_partition IMG N SLACK_MIB: shrink the file system of partition N to its minimum,
# then the partition to that plus SLACK_MIB (rounded up to ALIGN), and grow the file
# system back to fill it (the slack is free space for logs, caches and updates).
shrink_partition() {
  local img=$1 n=$2 slack_mib=$3 sectors
  resize_fs "$img" "$n" min
  sectors=$(( $(fs_sectors "$img" "$n") + slack_mib * 2048 ))
  sectors=$(( (sectors + ALIGN - 1) / ALIGN * ALIGN ))
  echo ", $sectors" | sfdisk --quiet --no-reread --no-tell-kernel -N "$n" "$img"
  resize_fs "$img" "$n"
}

# append_partition IMG MIB -> the new partition's number: an aligned Linux partition of
# MIB right after the last one; the file is extended (or cut) to end exactly there.
append_partition() {
  local img=$1 mib=$2 last start size
  last=$(part_count "$img")
  start=$(( ($(part_end "$img" "$last") + ALIGN - 1) / ALIGN * ALIGN ))
  size=$(( mib * 2048 ))
  truncate -s $(( (start + size) * SECTOR )) "$img"
  echo "$start, $size, L" | sfdisk --quiet --no-reread --no-tell-kernel --append "$img"
  echo $(( last + 1 ))
}

# cut_after_last IMG: drop the file's tail after the last partition (a smaller download).
cut_after_last() {
  local img=$1 last
  last=$(part_count "$img")
  truncate -s $(( $(part_end "$img" "$last") * SECTOR )) "$img"
}

# make_data_fs IMG N LABEL: a fresh ext4 file system for the box's data. It ships small
# and grows to the card at first boot (resize2fs keeps the block size and inodes per
# group), so it is made for the grown size, not for the small one mke2fs would guess
# ("small": 1 KiB blocks and an inode per 4 KiB, gigabytes of inode tables on a big card):
# 4 KiB blocks, an inode per 64 KiB (media are files of tens of KiB and more), no reserved
# blocks (no root daemon writes here), inode tables and journal written now rather than by
# a background thread on the box's first boot.
make_data_fs() {
  local img=$1 n=$2 label=$3 dev rc=0
  dev=$(part_loop "$img" "$n")
  mkfs.ext4 -q -F -L "$label" -T default -b 4096 -i 65536 -m 0 \
    -E lazy_itable_init=0,lazy_journal_init=0 "$dev" || rc=$?
  losetup -d "$dev"
  return "$rc"
}
