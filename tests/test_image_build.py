"""The image build's partition handling (image-build/lib.sh) and the first-boot growth of
the data partition (svoyak-grow-data), on a small synthetic disk image shaped like
Raspberry Pi OS Lite's (a FAT boot partition, then an ext4 root). Needs root for loop
devices; the real base image and arm64 emulation are covered in docs/appliance.md."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "image-build" / "lib.sh"
GROW = ROOT / "image-build" / "files" / "svoyak-grow-data"
MIB = 1024 * 1024
SECTORS_PER_MIB = 2048
TOOLS = ["sfdisk", "losetup", "mkfs.vfat", "fsck.vfat", "mkfs.ext4", "e2fsck", "resize2fs",
         "dumpe2fs", "debugfs"]


def require_tools() -> None:
    path = "/usr/sbin:/sbin:" + os.environ["PATH"]
    missing = [t for t in TOOLS if not shutil.which(t, path=path)]
    if missing:
        pytest.fail(f"missing {missing}: run scripts/test-deps.sh "
                    "(apt-get install fdisk dosfstools e2fsprogs mount)")
    if os.geteuid() != 0:
        pytest.fail("the image-build test needs root (loop devices); CI runs as root")


def sh(script: str, *args: str) -> str:
    """Run bash with lib.sh sourced."""
    env = dict(os.environ, PATH="/usr/sbin:/sbin:" + os.environ["PATH"])
    r = subprocess.run(["bash", "-c", f"set -euo pipefail; . '{LIB}'; {script}", "sh", *args],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"{script}: {r.stderr}"
    return r.stdout.strip()


def partitions(img: Path) -> list[dict]:
    out = subprocess.run(["sfdisk", "--json", str(img)], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)["partitiontable"]["partitions"]


def ext4(img: Path, n: int) -> dict[str, str]:
    """dumpe2fs -h fields of partition n's file system (e2fsck -n must find it clean)."""
    loop = sh('part_loop "$1" "$2"', str(img), str(n))
    try:
        fsck = subprocess.run(["e2fsck", "-fn", loop], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        out = subprocess.run(["dumpe2fs", "-h", loop], capture_output=True, text=True,
                             check=True).stdout
        cat = subprocess.run(["debugfs", "-R", "cat /marker.txt", loop], capture_output=True,
                             text=True).stdout
    finally:
        subprocess.run(["losetup", "-d", loop], check=True)
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    fields["marker"] = cat
    return fields


def fs_sectors(fields: dict[str, str]) -> int:
    return int(fields["Block count"]) * int(fields["Block size"]) // 512


@pytest.fixture()
def image(tmp_path):
    """A 72 MiB disk: boot (FAT, 16 MiB at 4 MiB) and root (ext4, 48 MiB, with a file)."""
    require_tools()
    img = tmp_path / "base.img"
    img.write_bytes(b"")
    os.truncate(img, 68 * MIB)
    table = "label: dos\n8192, 32768, c\n40960, 98304, 83\n"
    subprocess.run(["sfdisk", "-q", str(img)], input=table, text=True, check=True)
    mkfs = {1: ["mkfs.vfat", "-n", "BOOTFS"], 2: ["mkfs.ext4", "-q", "-F", "-L", "rootfs"]}
    for n, cmd in mkfs.items():
        loop = sh('part_loop "$1" "$2"', str(img), str(n))
        try:
            subprocess.run([*cmd, loop], check=True, capture_output=True)
            if n == 2:
                marker = tmp_path / "marker.txt"
                marker.write_text("root survives\n")
                subprocess.run(["debugfs", "-w", "-R", f"write {marker} marker.txt", loop],
                               check=True, capture_output=True)
        finally:
            subprocess.run(["losetup", "-d", loop], check=True)
    return img


def test_part_fields_match_sfdisk(image):
    assert sh('part_count "$1"', str(image)) == "2"
    assert sh('part_start "$1" 2; part_size "$1" 2; part_end "$1" 2', str(image)).split() == [
        "40960", "98304", str(40960 + 98304)]


def test_grow_then_shrink_root_then_append_data(image):
    boot_before = partitions(image)[0]
    # Enlarge: the file grows by 64 MiB and the root partition and file system fill it.
    sh('grow_partition "$1" 2 64; resize_fs "$1" 2', str(image))
    parts = partitions(image)
    assert image.stat().st_size == 132 * MIB
    assert parts[1]["start"] == 40960
    assert parts[1]["start"] + parts[1]["size"] == image.stat().st_size // 512
    root = ext4(image, 2)
    assert fs_sectors(root) == parts[1]["size"]
    assert root["marker"] == "root survives\n"

    # Shrink: the file system to its minimum plus 8 MiB of slack, the partition to match
    # (aligned to 4 MiB), then the data partition right after, aligned, and the file cut.
    sh('shrink_partition "$1" 2 8', str(image))
    n = sh('append_partition "$1" 16', str(image))
    assert n == "3"
    sh('make_data_fs "$1" 3 svoyak-data', str(image))
    boot, root_part, data = partitions(image)
    assert boot == boot_before
    assert root_part["start"] == 40960
    assert root_part["size"] % 8192 == 0
    assert root_part["size"] < 132 * SECTORS_PER_MIB - 40960  # really shrunk
    root = ext4(image, 2)
    assert fs_sectors(root) == root_part["size"]
    assert int(root["Free blocks"]) * int(root["Block size"]) >= 7 * MIB
    assert root["marker"] == "root survives\n"
    assert data["start"] % 8192 == 0
    assert data["start"] >= root_part["start"] + root_part["size"]
    assert data["size"] == 16 * SECTORS_PER_MIB
    assert data["type"] == "83"
    assert image.stat().st_size == (data["start"] + data["size"]) * 512
    fields = ext4(image, 3)
    assert fields["Filesystem volume name"] == "svoyak-data"
    assert fs_sectors(fields) == data["size"]
    # Made for the card it grows to, not for its shipped size (mke2fs's "small" type).
    assert fields["Block size"] == "4096"
    assert int(fields["Inode count"]) * 65536 == pytest.approx(16 * MIB, rel=0.1)
    assert fields["Reserved block count"] == "0"
    loop = sh('part_loop "$1" 1', str(image))
    try:
        fat = subprocess.run(["fsck.vfat", "-n", loop], capture_output=True, text=True)
    finally:
        subprocess.run(["losetup", "-d", loop], check=True)
    assert fat.returncode == 0, fat.stdout


def test_first_boot_grows_the_data_partition_to_the_card(image):
    sh('shrink_partition "$1" 2 4; append_partition "$1" 8 >/dev/null; '
       'make_data_fs "$1" 3 svoyak-data', str(image))
    small = partitions(image)[2]
    # The image written to a bigger card: 40 MiB more after the data partition.
    os.truncate(image, image.stat().st_size + 40 * MIB)
    start = small["start"] * 512
    # What the kernel shows for the partition after partx: a device up to the card's end.
    loop = subprocess.run(["losetup", "--find", "--show", "--offset", str(start), str(image)],
                          capture_output=True, text=True, check=True).stdout.strip()
    try:
        env = dict(os.environ, PATH="/usr/sbin:/sbin:" + os.environ["PATH"])
        run = subprocess.run([str(GROW), "--disk", str(image), "--part", "3", "--dev", loop],
                             capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
        assert "growing" in run.stdout
        again = subprocess.run([str(GROW), "--disk", str(image), "--part", "3", "--dev", loop],
                               capture_output=True, text=True, env=env)
        assert (again.returncode, again.stdout) == (0, "")  # nothing left to gain
        other = subprocess.run([str(GROW), "--disk", str(image), "--part", "2", "--dev", loop],
                               capture_output=True, text=True, env=env)
        assert other.returncode == 0 and "not the last" in other.stderr
    finally:
        subprocess.run(["losetup", "-d", loop], check=True)
    data = partitions(image)[2]
    assert data["start"] == small["start"]
    assert data["start"] + data["size"] == image.stat().st_size // 512
    fields = ext4(image, 3)
    assert fs_sectors(fields) == data["size"]
    assert fields["Filesystem volume name"] == "svoyak-data"
