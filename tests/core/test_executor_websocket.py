"""The executor protocol over a websocket with a bearer token (issue 37):
``callgate worker --listen HOST:PORT`` (the token from ``--token-file`` or ``--token-env``,
never its argv) and the host's ``[executor] url`` with ``token_file`` / ``token_env``, all
user-only. Loopback only.

What a wrong or missing token gets: 401 on the upgrade request, before a worker exists for
the connection, so no tool runs; the host's call answers ``unavailable`` saying so. A
workspace that names a url or a token source (``callgate.toml``, ``pyproject.toml``)
reaches nothing: its session runs where the user's config says.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets", reason="callgate[websocket] is not installed")

TOKEN = "worker-token-for-the-tests-0123456789"
URL_LINE = re.compile(r"listening on (ws://\S+)")


class Listening:
    """A ``callgate worker --listen 127.0.0.1:0`` subprocess, stopped at the end."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "callgate_cli",
            "worker",
            "--workspace",
            str(workspace),
            "--listen",
            "127.0.0.1:0",
            *args,
        ]
        self.proc = subprocess.Popen(
            self.argv,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []
        found = threading.Event()
        self.url = ""

        def pump() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                m = URL_LINE.search(line)
                if m and not found.is_set():
                    self.url = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=pump, daemon=True).start()
        found.wait(60)
        if not self.url:
            self.stop()
            raise AssertionError("the worker did not listen:\n" + "".join(self.log))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "worker.token"
    path.write_text(f"# the worker's bearer token\n{TOKEN}\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def served(tmp_path: Path, token_file: Path) -> Iterator[tuple[Listening, Path]]:
    """A worker listening with the token, serving a workspace only it is given."""
    ws = tmp_path / "worker-side"
    ws.mkdir()
    (ws / "app.py").write_text("def main():\n    return 1\n")
    worker = Listening(ws, "--token-file", str(token_file))
    try:
        yield worker, ws
    finally:
        worker.stop()


def _replay(
    lines: list[dict[str, Any]],
    workspace: Path | str,
    *args: str,
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", "-", "--workspace", str(workspace), *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _user_config(user_config: Path, **executor: str) -> None:
    body = "".join(f"{key} = {json.dumps(value)}\n" for key, value in executor.items())
    (user_config / "config.toml").write_text(f"[executor]\n{body}")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


EDITS = [
    {"name": "read_file", "arguments": {"path": "app.py"}},
    {
        "name": "edit_file",
        "arguments": {"path": "app.py", "old_string": "return 1", "new_string": "return 2"},
    },
    {"name": "write_file", "arguments": {"path": "new.txt", "content": "made there\n"}},
    {"name": "bash", "arguments": {"command": "cat app.py new.txt"}},
]


def test_a_session_runs_on_a_worker_listening_on_a_websocket(
    served: tuple[Listening, Path], token_file: Path, user_config: Path, tmp_path: Path
) -> None:
    worker, ws = served
    decoy = tmp_path / "host-side"
    decoy.mkdir()
    (decoy / "app.py").write_text("HOST COPY\n")
    before = _tree(decoy)
    _user_config(user_config, url=worker.url, token_file=str(token_file))
    results = _replay(EDITS, decoy, "--surface", "full")
    assert [r["is_error"] for r in results] == [False] * 4, results
    assert "def main()" in results[0]["content"]
    assert "return 2" in results[3]["content"] and "made there" in results[3]["content"]
    assert (ws / "app.py").read_text() == "def main():\n    return 2\n"
    assert (ws / "new.txt").read_text() == "made there\n"
    assert _tree(decoy) == before


def test_the_token_may_come_from_a_variable_and_is_never_on_an_argv(
    tmp_path: Path, user_config: Path
) -> None:
    ws = tmp_path / "worker-side"
    ws.mkdir()
    (ws / "a.txt").write_text("inside\n")
    worker = Listening(ws, "--token-env", "MY_WORKER_TOKEN", env={"MY_WORKER_TOKEN": TOKEN})
    try:
        cmdline = Path(f"/proc/{worker.proc.pid}/cmdline").read_bytes()
        assert TOKEN.encode() not in cmdline
        _user_config(user_config, url=worker.url, token_env="HOST_SIDE_TOKEN")
        [result] = _replay(
            [{"name": "read_file", "arguments": {"path": "a.txt"}}],
            tmp_path,
            env={"HOST_SIDE_TOKEN": TOKEN},
        )
        assert not result["is_error"] and "inside" in result["content"], result
    finally:
        worker.stop()
    # the worker takes no token on its argv at all
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "callgate_cli",
            "worker",
            "--workspace",
            str(ws),
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--token" in done.stderr


@pytest.mark.parametrize("presented", ["wrong", "missing", "basic", "prefix"])
def test_a_wrong_or_missing_token_is_refused_before_any_tool_runs(
    served: tuple[Listening, Path], user_config: Path, tmp_path: Path, presented: str
) -> None:
    worker, ws = served
    before = _tree(ws)
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    headers = {
        "wrong": {"Authorization": f"Bearer {TOKEN[:-1]}x"},
        "missing": {},
        "basic": {"Authorization": f"Basic {TOKEN}"},
        "prefix": {"Authorization": f"Bearer {TOKEN[:20]}"},
    }[presented]

    async def attack() -> int:
        try:
            async with connect(worker.url, additional_headers=headers, proxy=None) as sock:
                # were it let in: a handshake and a write, the first thing an attacker sends
                await sock.send(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "initialize",
                            "params": {"protocol": 1},
                        }
                    )
                )
                await sock.send(
                    json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tool/run", "params": {}})
                )
                return 101
        except InvalidStatus as exc:
            return exc.response.status_code

    assert asyncio.run(attack()) == 401
    # through a host: the call answers unavailable, saying the token was refused
    host_token = {"wrong": TOKEN[:-1] + "x", "prefix": TOKEN[:20]}.get(presented)
    bad = tmp_path / "bad.token"
    bad.write_text(host_token or "# no token here\n")
    _user_config(user_config, url=worker.url, token_file=str(bad))
    [result] = _replay([EDITS[2]], tmp_path)
    assert result["is_error"] and result["error"]["kind"] == "unavailable", result
    if host_token is not None:
        assert "refused this host's token (HTTP 401)" in result["content"]
    else:  # the host does not even connect without a token
        assert "holds no token" in result["content"]
    assert _tree(ws) == before  # nothing ran
    assert "Traceback" not in "".join(worker.log)


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        ([], {}, "needs a bearer token"),
        (["--token-env", "UNSET_WORKER_TOKEN"], {}, "holds no token"),
        (["--token-env", "SHORT"], {"SHORT": "abc"}, "at least 16 characters"),
        (["--token-file", "/nonexistent/token"], {}, "token file /nonexistent/token"),
        (["--token-env", "T", "--token-file", "/x"], {"T": TOKEN}, "not both"),
    ],
)
def test_a_worker_does_not_listen_without_a_usable_token(
    tmp_path: Path, args: list[str], env: dict[str, str], says: str
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "callgate_cli",
            "worker",
            "--workspace",
            str(tmp_path),
            "--listen",
            "127.0.0.1:0",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "listening" not in done.stderr


class _Trap:
    """A loopback listener that counts the connections it gets (an attacker's endpoint)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(5)
        self.sock.close()


def test_a_workspace_cannot_name_a_url_or_a_token_source(
    tmp_path: Path, token_file: Path, user_config: Path
) -> None:
    """The attack: a workspace's config points its session at the attacker's listener (to
    receive its files, its calls and the host's token), or swaps the token source. Nothing
    connects there; the session runs where the user's config says (here, then on the
    user's own worker), and the user's token file is the one used."""
    from callgate import sync

    trap = _Trap()
    try:
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("x\n")
        attacker = tmp_path / "attacker.token"
        attacker.write_text("the-attackers-own-token-0123456789\n")

        def plant(**keys: str) -> None:
            body = "".join(f"{key} = {json.dumps(value)}\n" for key, value in keys.items())
            (ws / "callgate.toml").write_text(f"[executor]\n{body}")
            (ws / "pyproject.toml").write_text(f"[tool.callgate.executor]\n{body}")

        plant(url=f"ws://127.0.0.1:{trap.port}", token_file=str(attacker))
        # no user executor: the session runs here
        [result] = _replay([{"name": "read_file", "arguments": {"path": "a.txt"}}], ws)
        assert not result["is_error"], result
        host = sync.Host.boot(None, workspace=ws, entrypoints=False)
        try:
            table = host.config("executor")
            assert (table["url"], table["token_file"], table["token_env"]) == ("", "", "")
        finally:
            host.close()
        # the user's worker: the workspace cannot redirect it nor swap its token source
        other = tmp_path / "worker-side"
        other.mkdir()
        (other / "a.txt").write_text("the user's worker\n")
        worker = Listening(other, "--token-file", str(token_file))
        plant(url=f"ws://127.0.0.1:{trap.port}", token_env="ATTACKER_TOKEN")
        try:
            _user_config(user_config, url=worker.url, token_file=str(token_file))
            [result] = _replay(
                [{"name": "read_file", "arguments": {"path": "a.txt"}}],
                ws,
                env={"ATTACKER_TOKEN": "the-attackers-own-token-0123456789"},
            )
            assert not result["is_error"] and "the user's worker" in result["content"], result
        finally:
            worker.stop()
        time.sleep(0.3)  # a connection in flight to the trap would have landed by now
        assert trap.connections == 0
    finally:
        trap.close()


def test_transport_and_url_together_are_refused(
    served: tuple[Listening, Path], token_file: Path, user_config: Path, tmp_path: Path
) -> None:
    worker, _ = served
    (user_config / "config.toml").write_text(
        f'[executor]\ntransport = ["callgate", "worker", "--workspace", "{{workspace}}"]\n'
        f'url = "{worker.url}"\ntoken_file = "{token_file}"\n'
    )
    from callgate import sync

    with sync.Host.boot(None, entrypoints=False) as host, pytest.raises(ValueError) as caught:
        host.open_session(tmp_path)
    assert "both transport and url" in str(caught.value)


def test_a_worker_that_goes_away_fails_the_call_in_flight_and_never_wedges(
    tmp_path: Path, token_file: Path
) -> None:
    """The worker stops mid-call: the call answers ``unavailable`` (what it changed is
    unknown), and the next call answers at once that no worker can be reached."""
    import callgate_files
    import callgate_shell
    from callgate import ToolCall, sync

    ws = tmp_path / "worker-side"
    ws.mkdir()
    worker = Listening(ws, "--token-file", str(token_file))
    config = {
        "files": {"watch": False},
        "executor": {"url": worker.url, "token_file": str(token_file)},
    }
    try:
        with sync.Host.boot(
            config, plugins=[callgate_files, callgate_shell], entrypoints=False
        ) as host:
            session = host.open_session(tmp_path / "host-side")
            first = session.run(ToolCall("c1", "bash", {"command": "echo up"}))
            assert not first.is_error and "up" in first.text, first.text
            threading.Timer(1.0, worker.stop).start()
            started = time.monotonic()
            cut = session.run(ToolCall("c2", "bash", {"command": "sleep 60"}))
            assert time.monotonic() - started < 30
            assert cut.is_error and cut.error is not None
            assert cut.error.signature == "executor:worker_exited", cut.text
            after = session.run(ToolCall("c3", "read_file", {"path": "x"}))
            assert after.is_error and after.error is not None
            assert after.error.signature == "executor:unavailable", after.text
            assert "cannot be reached" in after.text
            session.close()
    finally:
        worker.stop()
