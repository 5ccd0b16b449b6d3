"""A minimal Debian chroot for the provisioning test, cached between runs.

The pristine debootstrap tree is kept in a cache directory (SVOYAK_TEST_CACHE, else
/var/cache/svoyak-test when writable, else build/test-cache) and copied for each run, so a
run always applies site.yml to a fresh system while paying for debootstrap only once. The
downloaded .deb files are kept there too and bind-mounted into the chroot (pip's cache
directory is offered the same way, though pip in the chroot has not been seen to use it).

Every cached tree (`layer`) is named by a digest of everything that made it: the base tree
by its suite, architecture, package lists, mirror, the host's CA file and the code below
that makes it; the layers the tests build on top of it add their own inputs. A change to
any of them makes a new tree instead of reusing one that no longer matches, so the cache
cannot make a test pass that would fail without it (tests/test_test_cache.py changes each
input and sees the name change).
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = "bookworm"
# What site.yml needs to run at all: Python for Ansible's modules, systemd for the units.
INCLUDE = "python3,python3-apt,systemd,systemd-sysv,ca-certificates,gpg"
# A foreign-architecture tree (arm64 under qemu-user-static) also serves the quick smoke
# test, which installs the wheel without running site.yml: a virtualenv and nmcli.
# (network-manager comes after debootstrap, whose resolver cannot choose among the virtual
# packages it depends on: dbus-system-bus, logind).
FOREIGN_INCLUDE = INCLUDE + ",python3-venv,python3-pip"
FOREIGN_EXTRA = ["dbus", "network-manager"]


def cache_dir() -> Path:
    env = os.environ.get("SVOYAK_TEST_CACHE")
    if env:
        path = Path(env)
    elif os.access("/var/cache", os.W_OK):
        path = Path("/var/cache/svoyak-test")
    else:
        path = ROOT / "build" / "test-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def debian_mirror() -> str:
    """The Debian mirror this machine's apt already uses (never a hard-coded host)."""
    if os.environ.get("SVOYAK_DEBIAN_MIRROR"):
        return os.environ["SVOYAK_DEBIAN_MIRROR"]
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
                uris, suites = fields.get("URIs", "").split(), fields.get("Suites", "").split()
                if "deb" in fields.get("Types", "").split() and _plain_suite(suites):
                    for uri in uris:
                        if uri.rstrip("/").endswith("/debian"):
                            return uri
        else:
            for line in text.splitlines():
                m = re.match(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
                if m and m.group(1).rstrip("/").endswith("/debian") and _plain_suite([m[2]]):
                    return m.group(1)
    raise RuntimeError(
        "no Debian mirror in /etc/apt/sources.list*; set SVOYAK_DEBIAN_MIRROR to one"
    )


def _plain_suite(suites: list[str]) -> bool:
    return any(re.fullmatch(r"[a-z]+", s) and s != "experimental" for s in suites)


def host_arch() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


def base_key(arch: str | None = None) -> str:
    """What the base tree for `arch` is made from: a change to any of it makes a new tree."""
    arch = arch or host_arch()
    foreign = arch != host_arch()
    return digest(SUITE, arch, FOREIGN_INCLUDE if foreign else INCLUDE,
                  *(FOREIGN_EXTRA if foreign else []), debian_mirror(), Path(HOST_CA),
                  inspect.getsource(make_base), inspect.getsource(finish_foreign))


HOST_CA = "/etc/ssl/certs/ca-certificates.crt"
# A base tree is remade after a week even when its key matches: the mirror's suite moves on
# (point releases), and a tree made from an older one should not decide a test for long.
BASE_MAX_AGE_S = 7 * 86400
# A layer holding what pip or apt fetched when it was made is remade after a day even when
# its key matches: they fetch the newest matching versions, and a tree older than that would
# hide what a new release broke.
FETCHED_MAX_AGE_S = 86400


def base_tree(log=print, arch: str | None = None) -> Path:
    """The pristine debootstrap tree for `arch` (default: this machine's), made on the
    first call and reused afterwards. A foreign architecture runs through qemu-user-static's
    binfmt handler (scripts/test-deps.sh registers it)."""
    arch = arch or host_arch()
    return layer(f"{SUITE}-{arch}-base", base_key(arch), lambda tmp: make_base(tmp, arch, log),
                 max_age_s=BASE_MAX_AGE_S, log=log)


def make_base(tmp: Path, arch: str, log=print) -> None:
    include = INCLUDE if arch == host_arch() else FOREIGN_INCLUDE
    log(f"debootstrap {SUITE} {arch} into {tmp} (once per base key)")
    subprocess.run(
        ["debootstrap", "--variant=minbase", f"--arch={arch}", f"--include={include}",
         SUITE, str(tmp), debian_mirror()],
        check=True, stdout=subprocess.DEVNULL,
    )
    if arch != host_arch():
        finish_foreign(tmp)
    # Package scripts must never start services in the build tree (as in image-build).
    policy = tmp / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    # pip inside the chroot must trust what this machine trusts (a proxy's CA, say).
    shutil.copy2(HOST_CA, tmp / "etc/ssl/host-ca.crt")
    for f in ("var/cache/apt/archives", "root/.cache/pip"):
        (tmp / f).mkdir(parents=True, exist_ok=True)


def layer(kind: str, key: str, make: Callable[[Path], None], *, max_age_s: float | None = None,
          keep: int = 2, log=print) -> Path:
    """cache_dir()/KIND-KEY, made by make(work) into a directory of this process's own and
    renamed into place only once make returns, then reused while its key matches (and, with
    max_age_s, while it is younger than that). The key must cover everything make's result
    depends on. Other layers of the same kind stay while they are among the `keep` last used
    and were used in the last day (another worktree or branch may be using one); half-made
    ones of processes that died go at once."""
    cache = cache_dir()
    out = cache / f"{kind}-{key}"
    made, used = out / ".complete", out / ".used"

    def fresh() -> bool:
        return made.exists() and (max_age_s is None
                                  or time.time() - made.stat().st_mtime < max_age_s)

    if fresh():
        used.touch()
        return out
    # One maker per layer: a run that needs it meanwhile (another test worker, another
    # worktree) waits for it rather than making the same tree beside it.
    with open(cache / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if fresh():
            used.touch()
            return out
        sweep(kind, out, keep)
        make_layer(out, make, log)
    return out


def make_layer(out: Path, make: Callable[[Path], None], log=print) -> None:
    made, used = out / ".complete", out / ".used"
    work = out.parent / f"{out.name}.tmp.{os.getpid()}"
    remove_tree(work)
    try:
        make(work)
        for stamp in (made, used):
            (work / stamp.name).touch()
        if out.exists():  # too old, or left by a process that died before renaming it
            remove_tree(out)
        work.rename(out)
    except BaseException:
        remove_tree(work)
        raise


def sweep(kind: str, current: Path, keep: int) -> None:
    """Remove the other layers of `kind` (see `layer`), and this kind's trees named by the
    versions of this module that had no key."""
    cache = cache_dir()
    others = []
    for old in cache.glob(f"{kind}*"):
        if old == current or not old.is_dir():
            continue
        name = old.name
        if ".tmp." in name:
            pid = name.rsplit(".", 1)[-1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                remove_tree(old)
            continue
        stamp = old / ".used" if (old / ".used").exists() else old / ".complete"
        others.append((stamp.stat().st_mtime if stamp.exists() else 0.0, old))
    others.sort(reverse=True)
    for i, (used, old) in enumerate(others):
        if i >= keep or time.time() - used > 86400:
            remove_tree(old)
            (cache / f".{old.name}.lock").unlink(missing_ok=True)


def finish_foreign(tree: Path) -> None:
    """What debootstrap could not install into a foreign tree, with the tree's own apt."""
    policy = tree / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    for f in ("var/cache/apt/archives", "root/.cache/pip"):
        (tree / f).mkdir(parents=True, exist_ok=True)
    apt = ("DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 "
           "--no-install-recommends")
    run_in_namespace(tree, f"chroot '{tree}' sh -c 'dpkg --configure -a || true; "
                     f"{apt} -f install && {apt} install {' '.join(FOREIGN_EXTRA)}'",
                     check=True, stdout=subprocess.DEVNULL)


def remove_tree(tree: Path) -> None:
    """rm -rf the tree, after unmounting whatever is mounted inside it (a scratch copy's
    overlay, left by a run that was killed)."""
    unmount_under(tree)
    if tree.exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(tree)], check=True)


def unmount_under(tree: Path) -> None:
    top = str(tree.absolute())
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in sorted(set(points), reverse=True):  # the innermost first
        if point == top or point.startswith(top + "/"):
            subprocess.run(["umount", "-l", point], check=True)


def overlay_mount(lower: Path, upper: Path, work: Path, root: Path) -> str | None:
    """Mount an overlay of `lower` (read-only) at `root`, its writes going to `upper`; the
    reason when the kernel or the file system refuses, else None."""
    r = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir={lower},upperdir={upper},workdir={work}", str(root)],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip() or f"mount exited {r.returncode}")


@contextmanager
def scratch_copy(lower: Path, dest: Path, log=print) -> Iterator[Path]:
    """A writable tree (dest/root) that starts as the cached tree `lower`, gone with dest
    afterwards. An overlay mount where the kernel allows one (`lower` stays read-only, this
    run's writes go to dest/upper), so a run copies nothing of a tree of a gigabyte or
    more; else a `cp -a`, and a line saying why."""
    remove_tree(dest)
    root, upper, work = dest / "root", dest / "upper", dest / "work"
    for d in (root, upper, work):
        d.mkdir(parents=True)
    why = overlay_mount(lower, upper, work, root)
    try:
        if why is not None:
            log(f"no overlay of {lower} ({why}): copying it with cp -a")
            root.rmdir()
            subprocess.run(["cp", "-a", str(lower), str(root)], check=True)
        yield root
    finally:
        remove_tree(dest)


def passed_once(name: str, key: str, check: Callable[[], object], log=print) -> None:
    """Run check() unless it passed before with this key: for a slow check of inputs that
    seldom change (ansible-lint of provisioning/), whose key must cover every one of them.
    A stamp (cache_dir()/NAME-KEY.passed) is written only once check returns, so a failure
    is never remembered; stamps of other keys unused for a week go."""
    cache = cache_dir()
    stamp = cache / f"{name}-{key}.passed"
    if stamp.exists():
        stamp.touch()
        log(f"{name}: passed before with key {key} ({stamp})")
        return
    check()
    tmp = cache / f".{stamp.name}.tmp.{os.getpid()}"
    tmp.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z\n"))
    tmp.rename(stamp)
    for old in cache.glob(f"{name}-*.passed"):
        if old != stamp and time.time() - old.stat().st_mtime > 7 * 86400:
            old.unlink(missing_ok=True)


def run_dir() -> Path:
    """This process's working tree in the cache; trees left by processes that died are
    removed first, so a killed run costs disk only until the next one."""
    cache = cache_dir()
    for old in cache.glob("run-*"):
        pid = old.name.rsplit("-", 1)[-1]  # run-PID, run-arm64-PID
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove_tree(old)
    remove_tree(cache / "run")  # the shared tree of earlier versions of this test
    return cache / f"run-{os.getpid()}"


def provision_arch() -> str:
    """The architecture of the tree the provisioning test applies site.yml to: this
    machine's, or SVOYAK_TEST_ARCH (`make test-arm64` sets arm64, run under qemu)."""
    return os.environ.get("SVOYAK_TEST_ARCH") or host_arch()


def fresh_copy(dest: Path, arch: str | None = None) -> Path:
    """A fresh copy of the base tree at dest (replacing what was there)."""
    base = base_tree(arch=arch)
    remove_tree(dest)
    subprocess.run(["cp", "-a", str(base), str(dest)], check=True)
    return dest


def tree_arch(tree: Path) -> str:
    """The architecture of a tree's binaries (its /bin/sh's ELF machine field)."""
    machine = int.from_bytes((tree / "usr/bin/dash").read_bytes()[18:20], "little")
    return {0x3E: "amd64", 0xB7: "arm64"}.get(machine, host_arch())


def mount_script(tree: Path) -> str:
    """Shell lines that mount what a chroot run needs; run inside `unshare --mount`, so the
    mounts vanish with the process even if the test is killed."""
    cache = cache_dir()
    # One .deb cache per architecture: apt locks its archive directory for a whole
    # install, so an amd64 and an arm64 run sharing one would fail on each other's lock.
    arch = tree_arch(tree)
    apt = cache / ("apt-archives" if arch == host_arch() else f"apt-archives-{arch}")
    pip = cache / "pip"
    apt.mkdir(exist_ok=True)
    pip.mkdir(exist_ok=True)
    return "\n".join([
        "set -e",
        f"mount -t proc proc '{tree}/proc'",
        f"mount --bind /dev '{tree}/dev'",
        f"mount --bind /sys '{tree}/sys'",
        f"mount --bind '{apt}' '{tree}/var/cache/apt/archives'",
        f"mount --bind '{pip}' '{tree}/root/.cache/pip'",
        f"cp /etc/resolv.conf '{tree}/etc/resolv.conf'",
    ])


def run_in_namespace(tree: Path, command: str, **kwargs) -> subprocess.CompletedProcess:
    """Run a shell command with the chroot's mounts in a private mount namespace."""
    script = mount_script(tree) + "\n" + command
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", script], **kwargs
    )


def digest(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            h.update(part.name.encode())
            h.update(part.read_bytes() if part.is_file() else str(part).encode())
        else:
            h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def tree_digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return digest(*[f"{p.relative_to(folder)}:{p.stat().st_mode & 0o777:o}" for p in files],
                  *files)


def wheel(dest: Path) -> Path:
    """The project's wheel, as the image build makes it."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest),
                    str(ROOT)], check=True, capture_output=True)
    return next(dest.glob("svoyak-*.whl"))


def wheel_digest(path: Path) -> str:
    """What the wheel holds (its RECORD has every file's hash), not when it was zipped."""
    with zipfile.ZipFile(path) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        return digest(z.read(record).decode())
