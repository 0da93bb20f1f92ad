"""Attack class: reaching the host's daemons through Unix sockets (issue 16, defect 8).

With ``[sandbox] network = false`` a confined command has its own network
namespace, which stops every IP address and the abstract Unix namespace, but not a
Unix socket that is a file: the filesystem is there, read-only, and read-only does
not stop ``connect()``. The attacker connects, every way it knows, to listeners
the host runs under a fake ``~/.docker``, in the workspace, under the host's
``/tmp`` (reached through a symlink in the workspace) and in the abstract
namespace. The test's directories live under ``/tmp``, which the sandbox replaces
with its own, so they are shown with ``[sandbox] readable`` as a real home is.
Counted: connections the listeners accepted (must be 0 with the network off), and,
as a control, that the same commands do connect with the network on.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import callgate_sandbox
import callgate_shell
import pytest

from tests.contrib.sandbox.sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap
PYTHON = os.path.realpath(sys.executable)  # the base interpreter: a venv in /tmp is hidden


class Listener:
    """Unix stream listeners that count the connections they accept."""

    def __init__(self) -> None:
        self.accepted: dict[str, int] = {}
        self._socks: list[socket.socket] = []
        self._stop = threading.Event()

    def add(self, name: str, address: str) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(address)
        sock.listen(16)
        sock.settimeout(0.1)
        self.accepted[name] = 0
        self._socks.append(sock)
        threading.Thread(target=self._serve, args=(name, sock), daemon=True).start()

    def _serve(self, name: str, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted[name] += 1
            conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello from the host\n")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        for sock in self._socks:
            sock.close()


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[tuple[Listener, dict[str, str], Path]]:
    home = tmp_path / "home"
    (home / ".docker" / "run").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    host_tmp = Path(tempfile.mkdtemp(prefix="callgate-host-sock-", dir="/tmp"))
    paths = {"docker": str(home / ".docker" / "run" / "docker.sock"),
             "workspace": str(ws / "dev.sock"), "host-tmp": str(host_tmp / "agent.sock")}
    listener = Listener()
    for name, path in paths.items():
        listener.add(name, path)
    abstract = f"\0callgate-test-{os.getpid()}-{id(listener)}"
    listener.add("abstract", abstract)
    (ws / "tmp-link").symlink_to(host_tmp)
    targets = {"docker": paths["docker"], "workspace": "dev.sock",
               "host-tmp": "tmp-link/agent.sock", "abstract": abstract}
    yield listener, targets, ws, [str(home), str(host_tmp)]
    listener.close()
    shutil.rmtree(host_tmp, ignore_errors=True)


def attacks(targets: dict[str, str]) -> list[tuple[str, str]]:
    """``(target name, command)``: each tries to connect and read the greeting."""
    out = []
    for name, address in targets.items():
        spelled = repr(address)
        out.append((name, f"{PYTHON} -I -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                          f"s.connect({spelled}); print(s.recv(100))\""))
        if name == "abstract":
            continue
        if shutil.which("curl"):
            out.append((name, f"curl -s --max-time 5 --unix-socket {address} http://x/"))
        if shutil.which("socat"):
            out.append((name, f"socat -T2 - UNIX-CONNECT:{address} </dev/null"))
        if shutil.which("nc"):
            out.append((name, f"nc -U -w2 {address} </dev/null"))
        out.append((name, f"{PYTHON} -I -c \"import socket; s = socket.socket(socket.AF_UNIX, "
                          f"socket.SOCK_DGRAM); s.connect({spelled})\""))
    return out


def run(callgate_session: Any, ws: Path, network: bool, home: str, readable: list[str],
        commands: list[tuple[str, str]]) -> list[Any]:
    s = callgate_session(plugins=[callgate_shell, callgate_sandbox], workspace=ws,
                         config={"sandbox": {"enabled": True, "network": network,
                                             "readable": readable}})
    return [s.call("bash", {"command": f"export HOME={home}; {command}"})
            for _name, command in commands]


def test_no_unix_socket_is_reachable_with_the_network_off(
        callgate_session: Any, listeners: Any, tmp_path: Path,
        figure: Callable[..., None]) -> None:
    listener, targets, ws, readable = listeners
    commands = attacks(targets)
    results = run(callgate_session, ws, False, str(tmp_path / "home"), readable, commands)
    reached = sum(listener.accepted.values())
    greeted = [cmd for (_n, cmd), r in zip(commands, results, strict=True)
               if "hello from the host" in r.text]
    figure("sandbox sockets: network off", cases=len(commands), targets=len(targets),
           accepted=dict(listener.accepted), failures=reached + len(greeted))
    assert reached == 0, listener.accepted
    assert not greeted
    refused = results[0]
    assert "Operation not permitted" in refused.text or "PermissionError" in refused.text


def test_the_same_sockets_are_reachable_with_the_network_on(
        callgate_session: Any, listeners: Any, tmp_path: Path) -> None:
    """The control: the attacks are real (with the network on a socket under ~/.docker or in
    the workspace does answer), so the zero above is the filter's doing."""
    listener, targets, ws, readable = listeners
    python_only = [(n, c) for n, c in attacks(targets)
                   if c.startswith(PYTHON) and "SOCK_DGRAM" not in c and n != "abstract"]
    results = run(callgate_session, ws, True, str(tmp_path / "home"), readable, python_only)
    assert all("hello from the host" in r.text for r in results), [r.text for r in results]
    assert all(listener.accepted[n] >= 1 for n in ("docker", "workspace", "host-tmp"))


def test_pipes_and_socketpairs_still_work_with_the_network_off(
        callgate_session: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    s = callgate_session(plugins=[callgate_shell, callgate_sandbox], workspace=ws,
                         config={"sandbox": {"enabled": True, "network": False}})
    r = s.call("bash", {"command": f"echo piped | cat && {PYTHON} -I -c \"import socket; "
                                   "a, b = socket.socketpair(); a.send(b'pair'); "
                                   "print(b.recv(4).decode())\""})
    assert r.text.splitlines()[:2] == ["piped", "pair"], r.text
