"""The test cache's keys (tests/provisioning_chroot.py): a cached tree is named by a digest
of everything that made it, so changing any input must change the name (and a tree made
from other inputs is then never used), and a tree is kept only once it was made whole.

No chroot is made here: `layer` is run with small stand-in trees in a cache of the test's
own, and the keys are computed from copies of the real inputs with one thing changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provisioning_chroot as chroot  # noqa: E402
import test_arm64  # noqa: E402
import test_provisioning as prov  # noqa: E402


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("SVOYAK_TEST_CACHE", str(path))
    return path


def test_base_key_changes_with_each_input(monkeypatch, tmp_path):
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    key = chroot.base_key("amd64")
    assert chroot.base_key("amd64") == key  # the same inputs, the same tree
    assert chroot.base_key("arm64") != key
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://other.invalid/debian")
    assert chroot.base_key("amd64") != key
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    for name, value in [("SUITE", "trixie"), ("INCLUDE", chroot.INCLUDE + ",less")]:
        with monkeypatch.context() as m:
            m.setattr(chroot, name, value)
            assert chroot.base_key("amd64") != key, name
    ca = tmp_path / "ca.crt"
    ca.write_bytes(Path(chroot.HOST_CA).read_bytes() + b"\n")
    monkeypatch.setattr(chroot, "HOST_CA", str(ca))
    assert chroot.base_key("amd64") != key  # pip in the tree trusts what this machine trusts


def fake_wheel(path: Path, record: str) -> Path:
    """A wheel as far as `wheel_digest` reads one: its RECORD."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("svoyak-0.1.0.dist-info/RECORD", record)
    return path


def test_provisioned_key_changes_with_provisioning_the_wheel_and_the_variables(
        tmp_path, monkeypatch):
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    copy = tmp_path / "provisioning"
    shutil.copytree(prov.PROV, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for d in "abc":
        (tmp_path / d).mkdir()
    one = fake_wheel(tmp_path / "a/svoyak-0.1.0-py3-none-any.whl", "a.py,sha256=1,1\n")
    time.sleep(2.1)  # zipped at another time (zip keeps 2 s): the same files, the same key
    same = fake_wheel(tmp_path / "b" / one.name, "a.py,sha256=1,1\n")
    assert one.read_bytes() != same.read_bytes()
    key = prov.provisioned_key(one, "amd64", copy)
    assert prov.provisioned_key(same, "amd64", copy) == key
    assert prov.provisioned_key(one, "amd64", prov.PROV) == key  # by content, not by place
    assert prov.provisioned_key(one, "arm64", copy) != key

    other = fake_wheel(tmp_path / "c" / one.name, "a.py,sha256=2,1\n")
    assert prov.provisioned_key(other, "amd64", copy) != key  # one file of the app changed

    template = next(copy.glob("roles/*/templates/*.j2"))
    text = template.read_text()
    template.write_text(text + "\n")
    assert prov.provisioned_key(one, "amd64", copy) != key
    template.write_text(text)
    assert prov.provisioned_key(one, "amd64", copy) == key
    template.chmod(0o600)
    assert prov.provisioned_key(one, "amd64", copy) != key  # a mode is an input too
    template.chmod(0o644)
    (copy / "roles/base/files").mkdir(exist_ok=True)
    (copy / "roles/base/files/new.conf").write_text("x\n")
    assert prov.provisioned_key(one, "amd64", copy) != key
    (copy / "roles/base/files/new.conf").unlink()

    vars_ = prov.play_vars
    monkeypatch.setattr(prov, "play_vars", lambda w: {**vars_(w), "svoyak_readonly": False})
    assert prov.provisioned_key(one, "amd64", copy) != key
    monkeypatch.setattr(prov, "play_vars", vars_)
    monkeypatch.setitem(prov.FIRMWARE, "config.txt", "[all]\n")
    assert prov.provisioned_key(one, "amd64", copy) != key
    monkeypatch.undo()
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    assert prov.provisioned_key(one, "amd64", copy) == key
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda n: "0" if n == "ansible-core" else real(n))
    assert prov.provisioned_key(one, "amd64", copy) != key  # another Ansible


def test_arm64_layer_key_follows_the_dependencies(monkeypatch, cache):
    monkeypatch.setenv("SVOYAK_DEBIAN_MIRROR", "http://mirror.invalid/debian")
    seen = []
    monkeypatch.setattr(chroot, "layer", lambda kind, key, make, **kw: seen.append(key))
    test_arm64.smoke_layer()
    monkeypatch.setattr(test_arm64, "runtime_requirements", lambda: ["flask>=3.0"])
    test_arm64.smoke_layer()
    assert len(seen) == 2 and seen[0] != seen[1]


def test_a_layer_is_made_once_and_reused_while_its_key_matches(cache):
    made = []

    def make(tag):
        def run(work: Path) -> None:
            work.mkdir()
            (work / "what").write_text(tag)
            made.append(tag)
        return run

    a = chroot.layer("kind", "aaaa", make("a"))
    assert (a / "what").read_text() == "a" and a.name == "kind-aaaa"
    assert chroot.layer("kind", "aaaa", make("again")) == a and made == ["a"]
    b = chroot.layer("kind", "bbbb", make("b"))  # an input changed: never the old tree
    assert b != a and (b / "what").read_text() == "b" and made == ["a", "b"]
    assert a.exists()  # kept: another worktree may still be using it
    os.utime(a / ".complete", (time.time() - 100, time.time() - 100))
    again = chroot.layer("kind", "aaaa", make("a2"), max_age_s=50)
    assert again == a and (a / "what").read_text() == "a2"  # too old: made again


def test_two_runs_needing_one_layer_make_it_once(cache):
    made = []

    def slow(work: Path) -> None:
        work.mkdir()
        made.append(work.name)
        time.sleep(0.5)

    got = []
    runs = [threading.Thread(target=lambda: got.append(chroot.layer("kind", "ffff", slow)))
            for _ in range(2)]
    for r in runs:
        r.start()
    for r in runs:
        r.join()
    assert len(made) == 1 and got == [cache / "kind-ffff"] * 2


def test_a_layer_whose_making_failed_is_not_kept(cache):
    def broken(work: Path) -> None:
        work.mkdir()
        (work / "half").write_text("")
        raise subprocess.CalledProcessError(1, "debootstrap")

    with pytest.raises(subprocess.CalledProcessError):
        chroot.layer("kind", "cccc", broken)
    assert [p.name for p in cache.iterdir()] == [".kind-cccc.lock"]  # nothing to reuse

    def good(work: Path) -> None:
        work.mkdir()

    assert chroot.layer("kind", "cccc", good).is_dir()


def test_old_layers_and_dead_processes_work_are_swept(cache):
    cache.mkdir()

    def empty(work: Path) -> None:
        work.mkdir()

    dead = subprocess.Popen(["true"])
    dead.wait()
    (cache / f"kind-dddd.tmp.{dead.pid}").mkdir()  # a run killed while making it
    (cache / f"kind-eeee.tmp.{os.getpid()}").mkdir()  # one still being made
    olds = [chroot.layer("kind", f"old{i}", empty, keep=9) for i in range(4)]
    for age, old in enumerate(olds):
        os.utime(old / ".used", (time.time() - 10 * (4 - age),) * 2)
    stale = chroot.layer("kind", "stale", empty, keep=9)
    os.utime(stale / ".used", (time.time() - 2 * 86400,) * 2)
    chroot.layer("kind", "new", empty, keep=2)
    left = sorted(p.name for p in cache.iterdir() if p.is_dir())
    # the two last used, the new one, the one still being made; not the day-old one
    assert left == ["kind-eeee.tmp." + str(os.getpid()), "kind-new", "kind-old2", "kind-old3"]
    assert not (cache / ".kind-stale.lock").exists() and not (cache / ".kind-old0.lock").exists()


def test_lint_key_changes_with_provisioning_its_config_and_the_tools(tmp_path, monkeypatch):
    copy = tmp_path / "provisioning"
    shutil.copytree(prov.PROV, copy, ignore=shutil.ignore_patterns("__pycache__"))
    key = prov.lint_key(copy)
    assert prov.lint_key(prov.PROV) == key  # by content, not by place
    config = copy / ".ansible-lint"
    text = config.read_text()
    config.write_text(text + "skip_list: [name]\n")
    assert prov.lint_key(copy) != key
    config.write_text(text)
    task = next(copy.glob("roles/*/tasks/main.yml"))
    task.write_text(task.read_text() + "\n")
    assert prov.lint_key(copy) != key
    task.write_text(task.read_text()[:-1])
    assert prov.lint_key(copy) == key
    import importlib.metadata

    real = importlib.metadata.version
    for tool in prov.LINT_TOOLS:
        with monkeypatch.context() as m:
            m.setattr(importlib.metadata, "version", lambda n, t=tool: "0" if n == t else real(n))
            assert prov.lint_key(copy) != key, tool


def test_a_check_that_passed_is_not_run_again_and_a_failure_is_not_kept(cache):
    runs = []

    def check(ok: bool):
        def run() -> None:
            runs.append(ok)
            assert ok
        return run

    with pytest.raises(AssertionError):
        chroot.passed_once("lint", "aaaa", check(False))
    chroot.passed_once("lint", "aaaa", check(True))  # the failure was not remembered
    chroot.passed_once("lint", "aaaa", check(False))  # passed with this key: not run
    assert runs == [False, True]
    chroot.passed_once("lint", "bbbb", check(True))  # an input changed: run again
    assert runs == [False, True, True]
    old = cache / "lint-aaaa.passed"
    os.utime(old, (time.time() - 8 * 86400,) * 2)
    chroot.passed_once("lint", "cccc", check(True))
    assert not old.exists() and (cache / "lint-bbbb.passed").exists()


def snapshot(tree: Path) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(tree)): (p.lstat().st_mode, p.read_bytes() if p.is_file() else b"")
            for p in tree.rglob("*")}


def test_a_scratch_copy_never_writes_to_the_cached_tree(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("an overlay mount needs root (CI runs as root)")
    lower = tmp_path / "layer"
    (lower / "etc").mkdir(parents=True)
    (lower / "etc/hostname").write_text("cached\n")
    (lower / "etc/gone").write_text("x\n")
    (lower / "bin").mkdir()
    before = snapshot(lower)
    run = tmp_path / "run"
    logged = []
    with chroot.scratch_copy(lower, run, log=logged.append) as root:
        assert logged == [] and os.path.ismount(root)  # this kernel allows an overlay
        assert (root / "etc/hostname").read_text() == "cached\n"
        (root / "etc/hostname").write_text("changed\n")
        (root / "etc/gone").unlink()
        (root / "etc/new").write_text("new\n")
        (root / "bin").chmod(0o700)
        shutil.rmtree(root / "bin")
        assert snapshot(lower) == before
    assert snapshot(lower) == before and not run.exists()
    with chroot.scratch_copy(lower, run) as root:  # the next run starts from the cache
        assert (root / "etc/hostname").read_text() == "cached\n" and (root / "bin").is_dir()


def test_a_killed_runs_overlay_is_unmounted_and_removed(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("an overlay mount needs root (CI runs as root)")
    lower = tmp_path / "layer"
    lower.mkdir()
    (lower / "f").write_text("x\n")
    run = tmp_path / "run"
    for d in ("root", "upper", "work"):
        (run / d).mkdir(parents=True)
    assert chroot.overlay_mount(lower, run / "upper", run / "work", run / "root") is None
    chroot.remove_tree(run)  # what run_dir does with a dead process's tree
    assert not run.exists() and (lower / "f").read_text() == "x\n"


def test_without_an_overlay_a_scratch_copy_is_a_copy_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(chroot, "overlay_mount", lambda *a: "overlay: unknown filesystem")
    lower = tmp_path / "layer"
    lower.mkdir()
    (lower / "f").write_text("cached\n")
    logged = []
    with chroot.scratch_copy(lower, tmp_path / "run", log=logged.append) as root:
        assert not os.path.ismount(root) and (root / "f").read_text() == "cached\n"
        (root / "f").write_text("changed\n")
    assert (lower / "f").read_text() == "cached\n" and not (tmp_path / "run").exists()
    assert len(logged) == 1 and "unknown filesystem" in logged[0] and "cp -a" in logged[0]
