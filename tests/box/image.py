"""The booted box's kernel, initramfs and disk, made from Debian's own packages and cached.

Everything expensive is kept in the test cache (`provisioning_chroot.cache_dir()/box`) under
a name that carries a hash of what it was made from, so a change to the provisioning, the
app, the kernel package or this harness makes a new one and nothing else does:

- the kernel: Debian's `linux-image-6.1.0-57-amd64` .deb unpacked (never installed here);
- the initramfs: busybox-static and the storage modules, loaded in the order that works
  (BOOT-TEST.md); it mounts the root partition and hands over to systemd;
- gpio-sim.ko: the virtual GPIO chip, built out of tree from Debian's kernel source
  (Debian's kernels do not ship it; gpiosim.py);
- the provisioned tree: the debootstrap tree of the provisioning test with site.yml applied
  as an image build applies it, then the test layer (guest.py) and the state of a freshly
  flashed Raspberry Pi OS Lite card where it matters;
- the base disk: one raw disk holding that tree (partition 1) and an empty data partition
  (partition 2, `svoyak-data`). Each boot runs on a copy-on-write overlay of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES_DIR = HERE / "files"
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
import provisioning_chroot as chroot  # noqa: E402
from provisioning_chroot import digest, tree_digest, wheel, wheel_digest  # noqa: E402

KVER = os.environ.get("SVOYAK_BOX_KERNEL", "6.1.0-57-amd64")
# virtio before virtio_ring fails; ext4 needs its helpers first (BOOT-TEST.md).
INITRAMFS_MODULES = [
    "virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
    "virtio_blk", "crc16", "mbcache", "jbd2", "crc32c_generic", "ext4",
]
DATA_MIB = 256  # the data partition as an image ships it (image-build/build.sh)
SECTOR = 512
ROOT_START = 2048  # sectors: 1 MiB, as sfdisk aligns


def cache() -> Path:
    """The box's cache; work left by a process that died (NAME.tmp.PID) is removed."""
    path = chroot.cache_dir() / "box"
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.tmp.*"):
        pid = old.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            chroot.remove_tree(old)
    return path


def log(msg: str) -> None:
    print(f"[box] {msg}", file=sys.stderr, flush=True)


def deps() -> None:
    """The host's tools and the guest's .deb files (scripts/test-box-deps.sh)."""
    subprocess.run([str(ROOT / "scripts/test-box-deps.sh"), str(cache())], check=True)


def deb(name: str) -> Path:
    found = sorted((cache() / "debs").glob(f"{name}_*.deb"))
    if not found:
        raise RuntimeError(f"no {name} .deb in {cache() / 'debs'}: run scripts/test-box-deps.sh")
    return found[-1]


def done(path: Path) -> bool:
    return (path.parent / f"{path.name}.complete").exists()


def mark_done(path: Path) -> None:
    (path.parent / f"{path.name}.complete").touch()


def kernel() -> Path:
    """Debian's kernel package unpacked: boot/vmlinuz-KVER and lib/modules/KVER."""
    pkg = deb(f"linux-image-{KVER}")
    out = cache() / f"kernel-{pkg.stem}"
    if not done(out):
        log(f"unpacking {pkg.name}")
        chroot.remove_tree(out)
        subprocess.run(["dpkg-deb", "-x", str(pkg), str(out)], check=True)
        mark_done(out)
    return out


def vmlinuz() -> Path:
    return kernel() / f"boot/vmlinuz-{KVER}"


INIT = """#!/bin/busybox sh
# The test box's initramfs: Debian's storage modules in an order that loads, the root
# partition mounted read-write, then systemd.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do
  insmod "/lib/modules/$m.ko" || echo "initramfs: $m did not load"
done
root=/dev/vda1
for arg in $(cat /proc/cmdline); do
  case "$arg" in root=*) root=${arg#root=} ;; esac
done
n=0
while [ ! -b "$root" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
mkdir -p /newroot
if ! mount -t ext4 -o rw "$root" /newroot; then
  echo "initramfs: cannot mount $root"; exec sh
fi
umount /proc /sys
exec switch_root /newroot /sbin/init
"""


def initramfs() -> Path:
    pkg = deb("busybox-static")
    out = cache() / f"initramfs-{digest(INIT, pkg.name, *INITRAMFS_MODULES, KVER)}.cpio.gz"
    if out.exists():
        return out
    k = kernel()
    work = cache() / f"initramfs.tmp.{os.getpid()}"
    chroot.remove_tree(work)
    try:
        root = work / "root"
        for d in ("bin", "dev", "proc", "sys", "newroot", "lib/modules"):
            (root / d).mkdir(parents=True, exist_ok=True)
        shutil.copy2(busybox(), root / "bin/busybox")
        modroot = k / "lib/modules" / KVER
        index = {p.name.removesuffix(".ko"): p for p in modroot.rglob("*.ko")}
        for m in INITRAMFS_MODULES:
            src = index.get(m) or index.get(m.replace("_", "-"))
            if src is None:
                raise RuntimeError(f"no module {m} in {pkg.name}")
            shutil.copy2(src, root / "lib/modules" / f"{m}.ko")
        (root / "modules.order").write_text("\n".join(INITRAMFS_MODULES) + "\n")
        (root / "init").write_text(INIT)
        (root / "init").chmod(0o755)
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        subprocess.run(f"cd '{root}' && find . | cpio -o -H newc --quiet | gzip -1 > '{tmp}'",
                       shell=True, check=True)
        tmp.rename(out)
    finally:
        chroot.remove_tree(work)
    return out


def busybox() -> Path:
    """busybox-static's binary (the initramfs's shell, the phones' DHCP client)."""
    pkg = deb("busybox-static")
    out = cache() / f"busybox-{pkg.stem}"
    if not out.exists():
        work = cache() / f"busybox.tmp.{os.getpid()}"
        subprocess.run(["dpkg-deb", "-x", str(pkg), str(work)], check=True)
        (work / "bin/busybox").rename(out)
        chroot.remove_tree(work)
    return out


def play(tree: Path, wheel_path: Path, extra: dict | None = None) -> None:
    """site.yml through the chroot connection, as image-build/build.sh applies it (but for
    a plain Debian tree: no Raspberry Pi packages or firmware files)."""
    venv_bin = Path(sys.executable).parent
    variables = {
        "svoyak_on_pi": False,
        "svoyak_wheel": str(wheel_path),
        "svoyak_data_device": "LABEL=svoyak-data",
        "svoyak_pip_env": {"PIP_CERT": "/etc/ssl/host-ca.crt"},
        **(extra or {}),
    }
    path = f"{venv_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    env = (f"PATH='{path}' HOME=/root LANG=C.UTF-8 ANSIBLE_NOCOLOR=1 "
           "ANSIBLE_LOCAL_TEMP=/tmp/.ansible-svoyak")
    cmd = (f"cd '{ROOT / 'provisioning'}' && env -i {env} ansible-playbook -i '{tree},' "
           f"-c community.general.chroot site.yml -e '{json.dumps(variables)}'")
    r = in_namespace(tree, cmd)
    if r.returncode != 0:
        raise RuntimeError("site.yml failed:\n" + (r.stdout + r.stderr)[-6000:])


def in_namespace(tree: Path, command: str) -> subprocess.CompletedProcess[str]:
    """provisioning_chroot's mounts, but with an apt archive of the box's own: apt locks its
    archive directory for a whole install, and the provisioning tests of other checkouts on
    this machine share theirs."""
    shared = chroot.cache_dir() / "apt-archives"
    own = cache() / "apt-archives"
    own.mkdir(exist_ok=True)
    script = chroot.mount_script(tree).replace(f"'{shared}'", f"'{own}'")
    assert f"'{own}'" in script, "provisioning_chroot's mounts changed: look again"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c",
                           script + "\n" + command], capture_output=True, text=True)


def in_tree(tree: Path, command: str) -> None:
    """A shell command inside the tree (chroot), with a clean environment: this machine's
    PIP_*, proxies and certificate paths must not leak in."""
    env = "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
    r = in_namespace(tree, f"chroot '{tree}' {env} sh -ec {shlex.quote(command)}")
    if r.returncode != 0:
        raise RuntimeError(f"in the tree: {command}\n{r.stdout}{r.stderr}"[-4000:])


KEEP = 3  # cached trees and disks of one kind kept for other checkouts (each boots its own)


@contextlib.contextmanager
def maker(name: str) -> Iterator[None]:
    """One maker per cached thing: a run that needs it meanwhile (another worktree) waits
    for it rather than making the same tree beside it."""
    with open(cache() / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sweep(kind: str, current: Path) -> None:
    """Remove this kind's other trees and disks (the part of a name before its last '-'),
    but the KEEP - 1 last used in the last day: another checkout's code makes another key,
    and its VM may be booting from one."""
    others = []
    for old in cache().glob(f"{kind}-*"):
        name = old.name.removesuffix(".raw")
        if (name.rsplit("-", 1)[0] != kind or old == current or ".tmp" in name
                or name.endswith((".complete", ".used"))):
            continue
        stamp = old.parent / f"{old.name}.used"
        others.append((stamp.stat().st_mtime if stamp.exists() else 0.0, old))
    others.sort(reverse=True)
    for i, (used, old) in enumerate(others):
        if i >= KEEP - 1 or time.time() - used > 86400:
            log(f"removing {old.name} (unused)")
            if old.is_dir():
                chroot.remove_tree(old)
            else:
                old.unlink(missing_ok=True)
            for suffix in (".complete", ".used"):
                (old.parent / f"{old.name}{suffix}").unlink(missing_ok=True)
            (old.parent / f".{old.name}.lock").unlink(missing_ok=True)


def used(path: Path) -> Path:
    (path.parent / f"{path.name}.used").touch()
    return path


def cached_tree(name: str, make, from_tree: Path | None = None) -> Path:
    """cache()/name, made once by make(work) on a copy of from_tree (else the debootstrap
    tree); older trees of the same kind removed (sweep)."""
    out = cache() / name
    if done(out):
        return used(out)
    with maker(name):
        if done(out):
            return used(out)
        sweep(name.rsplit("-", 1)[0], out)
        work = cache() / f"{name}.tmp.{os.getpid()}"
        chroot.remove_tree(work)
        if from_tree is None:
            chroot.fresh_copy(work, arch="amd64")
        else:
            subprocess.run(["cp", "-a", str(from_tree), str(work)], check=True)
        try:
            make(work)
            chroot.remove_tree(out)
            work.rename(out)
        except BaseException:
            chroot.remove_tree(work)
            raise
        mark_done(out)
    return used(out)


def provisioned_tree(director: bool = False) -> Path:
    """The box's root file system: site.yml applied (cached on provisioning/ alone), then
    the wheel of this checkout installed as the app role installs it, the test layer
    added and the tree made fresh (cached on all of that)."""
    import gpiosim
    import guest

    role = "director" if director else "box"
    dist = cache() / f"wheel.{os.getpid()}"
    try:
        whl = wheel(dist)
        provisioned_key = digest(tree_digest(ROOT / "provisioning"), director,
                                 guest.PI_OS_STATE)

        def provision(work: Path) -> None:
            log(f"applying site.yml to {work.name} (after a change to provisioning/ only)")
            guest.like_pi_os(work)
            play(work, whl, {"svoyak_director": director})

        provisioned = cached_tree(f"provisioned-{role}-{provisioned_key}", provision)
        key = digest(provisioned_key, wheel_digest(whl), tree_digest(FILES_DIR),
                     HERE / "guest.py", deb("busybox-static").name,
                     deb(f"linux-image-{KVER}").name, gpiosim.module().name)

        def layer(work: Path) -> None:
            log(f"installing this checkout's wheel and the test layer into {work.name}")
            staged = work / "opt/svoyak/wheels" / whl.name
            for old in staged.parent.glob("svoyak-*.whl"):
                old.unlink()
            shutil.copy2(whl, staged)
            in_tree(work, f"PIP_CERT=/etc/ssl/host-ca.crt /opt/svoyak/venv/bin/pip install -q "
                          f"--disable-pip-version-check --force-reinstall --no-deps "
                          f"/opt/svoyak/wheels/{whl.name} && PIP_CERT=/etc/ssl/host-ca.crt "
                          f"/opt/svoyak/venv/bin/pip install -q --disable-pip-version-check "
                          f"/opt/svoyak/wheels/{whl.name}")
            guest.add_test_layer(work, kernel(), in_tree, busybox=busybox(), kver=KVER,
                                 extra_modules={"gpio-sim": gpiosim.module()})
            guest.make_fresh(work)

        return cached_tree(f"tree-{role}-{key}", layer, from_tree=provisioned)
    finally:
        shutil.rmtree(dist, ignore_errors=True)


def base_disk(director: bool = False) -> Path:
    """A raw disk: partition 1 the root (ext4, from the tree), partition 2 the empty data
    partition. Made with mke2fs -d (no loop device, no mount)."""
    tree = provisioned_tree(director)
    out = cache() / f"disk-{tree.name.removeprefix('tree-')}.raw"
    if out.exists():
        return used(out)
    with maker(out.name):
        if out.exists():
            return used(out)
        sweep(f"disk-{'director' if director else 'box'}", out)
        make_disk(tree, out)
    return used(out)


def make_disk(tree: Path, out: Path) -> None:
    used_mib = int(subprocess.run(["du", "-sxm", str(tree)], capture_output=True,
                                  text=True, check=True).stdout.split()[0])
    root_mib = used_mib + 768
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    work = cache() / f"fs.tmp.{os.getpid()}"
    work.mkdir(exist_ok=True)
    try:
        log(f"making the disk ({root_mib} MiB root, {DATA_MIB} MiB data)")
        rootfs, datafs = work / "root.ext4", work / "data.ext4"
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "rootfs", "-d", str(tree), str(rootfs),
                        f"{root_mib}M"], check=True)
        # As image-build/lib.sh makes it (no reserved blocks, 4 KiB blocks).
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "svoyak-data", "-T", "default", "-b",
                        "4096", "-i", "65536", "-m", "0", str(datafs), f"{DATA_MIB}M"],
                       check=True)
        root_sectors = root_mib * 1024 * 1024 // SECTOR
        data_start = ROOT_START + root_sectors
        data_sectors = DATA_MIB * 1024 * 1024 // SECTOR
        total = (data_start + data_sectors) * SECTOR + 1024 * 1024
        with open(tmp, "wb") as f:
            f.truncate(total)
        table = (f"label: dos\nlabel-id: 0x5b0a7e01\n"
                 f"start={ROOT_START}, size={root_sectors}, type=83\n"
                 f"start={data_start}, size={data_sectors}, type=83\n")
        subprocess.run(["sfdisk", "-q", str(tmp)], input=table, text=True, check=True)
        for fs, start in ((rootfs, ROOT_START), (datafs, data_start)):
            subprocess.run(["dd", f"if={fs}", f"of={tmp}", "bs=1M", "conv=notrunc,sparse",
                            f"seek={start * SECTOR}", "oflag=seek_bytes", "status=none"],
                           check=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        tmp.unlink(missing_ok=True)
