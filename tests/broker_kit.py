"""A real Mosquitto on loopback, configured by the provisioning role `broker` itself.

`render(tmp)` applies the role with ansible-playbook on this machine (connection local,
without the package install and systemd units) into a temporary directory, so the tests
run exactly the configuration a director box gets, with the data directory's permissions
the box has (`DATA`: its owner's alone, 0750, a group the broker is not in). `Broker`
starts, kills and restarts that mosquitto, running first what the role's drop-in for
mosquitto.service runs before a start and a reload (the broker's copy of the passwords);
`add_user` writes a password the way the director's admin does, into `passwd_file(tmp)`."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLES = ROOT / "provisioning" / "roles"
VENV_BIN = Path(sys.executable).parent
MOSQUITTO = shutil.which("mosquitto", path="/usr/sbin:/usr/bin:/sbin:/bin") or "mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


DATA = "data"  # the director's data directory inside broker_dir()


def broker_dir() -> Path:
    """A directory the broker can read after it drops root for its own user, as /etc and
    /run are on the box (pytest's own temporary directories are private to root), with
    the director's data directory in it as locked down as on the box: owned by the service
    user (here root) and its own group, 0750, which the broker cannot enter. The caller
    removes it."""
    tmp = Path(tempfile.mkdtemp(prefix="svoyak-broker-"))
    if os.geteuid() == 0:
        shutil.chown(tmp, "root", "mosquitto")
        tmp.chmod(0o750)
    data = tmp / DATA
    data.mkdir(mode=0o750)
    data.chmod(0o750)  # provisioning's app role: owner svoyak, group svoyak, 0750
    return tmp


def passwd_file(tmp: Path) -> Path:
    """The password file the director's app writes (the role's broker_passwd)."""
    return tmp / DATA / "broker" / "passwd"


def render(tmp: Path, port: int) -> Path:
    """Apply the `broker` role into `tmp` (see `broker_dir`); returns the mosquitto.conf it
    wrote."""
    tmp.mkdir(parents=True, exist_ok=True)
    root = os.geteuid() == 0
    user = pwd.getpwuid(os.geteuid()).pw_name
    # As root mosquitto drops to its own user, so its files get its group (as on the box).
    group = "mosquitto" if root else grp.getgrgid(os.getegid()).gr_name
    persist = tmp / "persist"
    persist.mkdir(exist_ok=True)
    if root:
        shutil.chown(persist, "mosquitto", "mosquitto")
    play = tmp / "broker-play.yml"
    play.write_text(f"""---
- name: Render the broker role
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    svoyak_image_mode: false
    broker_install: false
    svoyak_address: 127.0.0.1
    broker_port: {port}
    svoyak_data_dir: {tmp / DATA}
    broker_passwd_copy: {tmp}/run/svoyak.passwd
    broker_passwd_tool: {ROLES}/broker/files/svoyak-broker-passwd
    broker_dropin: {tmp}/mosquitto.service.d/svoyak.conf
    broker_conf: {tmp}/mosquitto.conf
    broker_acl: {tmp}/svoyak.acl
    broker_passwd_owner: {user}
    broker_group: {group}
    broker_persistence_dir: {persist}/
    broker_pid_file: ""
    broker_log_dest: stderr
  roles:
    - broker
""")
    env = {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
           "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
           "ANSIBLE_ROLES_PATH": str(ROLES), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
           "ANSIBLE_LOCAL_TEMP": str(tmp / ".ansible-tmp"),
           "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
    r = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", "localhost,", str(play)],
                       env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"the broker role failed:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
    return tmp / "mosquitto.conf"


def add_user(passwd: Path, user: str, password: str) -> None:
    subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, password], check=True,
                   capture_output=True, timeout=30)


def dropin(tmp: Path) -> dict[str, list[list[str]]]:
    """The commands of the role's drop-in for mosquitto.service, by setting (an empty
    ExecReload= resets the list, as systemd reads it)."""
    out: dict[str, list[list[str]]] = {}
    path = tmp / "mosquitto.service.d" / "svoyak.conf"
    for line in path.read_text().splitlines() if path.exists() else []:
        key, sep, value = line.partition("=")
        if sep and key.startswith("Exec"):
            out.setdefault(key, [])
            if value:
                out[key].append(value.split())
            else:
                out[key].clear()
    return out


class Broker:
    """mosquitto -c CONF on loopback; `kill()` is SIGKILL (a pulled cord), `start()` again
    reuses its persistence directory. Before a start and a reload it runs the role's
    drop-in commands, as systemd does on the box."""

    def __init__(self, conf: Path, port: int):
        self.conf = conf
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = conf.parent / "mosquitto.log"
        self.exec = dropin(conf.parent)

    def _run(self, key: str) -> None:
        for cmd in self.exec.get(key, []):
            if cmd[0] == "/bin/kill":  # ExecReload's SIGHUP: sent by reload() itself
                continue
            subprocess.run(cmd, check=True, capture_output=True, timeout=30)

    def start(self, wait_s: float = 10.0) -> Broker:
        self._run("ExecStartPre")
        log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def reload(self) -> None:
        """SIGHUP: re-read the password file (what svoyak-broker-reload does on the box)."""
        if self.proc is not None:
            self._run("ExecReload")
            self.proc.send_signal(signal.SIGHUP)
            time.sleep(0.3)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
