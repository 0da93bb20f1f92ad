"""Helpers for the durable-session tests: host processes, replay runs, the test's store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from callgate import sync
from callgate.store import open_store

HERE = Path(__file__).parent
CHILD = HERE / "_child.py"


def child(*args: str, timeout: float = 120) -> list[dict[str, Any]]:
    """Run ``_child.py`` to completion; its JSON lines."""
    proc = subprocess.run([sys.executable, str(CHILD), *args], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(CHILD), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def replay(workspace: Path, lines: list[dict[str, Any]], *extra: str,
           plugins: str = "files,shell,capability") -> subprocess.CompletedProcess[str]:
    """``callgate replay`` of ``lines`` in a fresh process."""
    transcript = workspace.parent / f"t{os.urandom(4).hex()}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": plugins}
    return subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(workspace), "--surface", "full", *extra],
                          capture_output=True, text=True, env=env, timeout=120)


def results(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}


def store_path() -> Path:
    return Path(os.environ["CALLGATE_HOME"]) / "sessions" / "sessions.sqlite3"


@pytest.fixture
def store() -> Iterator[Any]:
    """The test's session store (its private ``$CALLGATE_HOME``'s)."""
    opened = open_store()
    yield opened
    opened.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "notes.txt").write_text("hello world\nsecond line\n")
    return w


@pytest.fixture
def hosts() -> Iterator[Any]:
    """``hosts(plugins, config)``: blocking hosts, each closed at the end (a "process")."""
    made: list[sync.Host] = []

    def boot(plugins: list[Any], config: dict[str, Any] | None = None,
             surface: str = "full") -> sync.Host:
        host = sync.Host.boot(config or {}, plugins=plugins, entrypoints=False,
                              surface=surface)
        made.append(host)
        return host

    yield boot
    for host in made:
        host.close()
