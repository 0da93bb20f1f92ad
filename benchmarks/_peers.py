"""The peer tools that cannot live in the project's lock, in a cached venv of their own.

openhands-aci (the OpenHands editor) requires Python >= 3.12 and pins
dependencies that clash with ours, so it is installed from the pinned
``peers-requirements.txt`` into ``benchmarks/.venv-peers`` (override with
``CALLGATE_BENCH_PEERS_VENV``) with ``pip --ignore-requires-python
--only-binary=:all:`` (binary wheels only: the newest sources of some of its
dependencies need 3.12 to build). The venv is reused while the requirements file
is unchanged. When it cannot be installed, callers get the reason and skip the row.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "peers-requirements.txt"
WORKER = HERE / "_peer_editor.py"


def venv_dir() -> Path:
    return Path(os.environ.get("CALLGATE_BENCH_PEERS_VENV") or HERE / ".venv-peers")


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stamp() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]


def ensure_peers(install: bool = True, log: Any = sys.stderr) -> tuple[str | None, str]:
    """``(python, "")`` of a venv with openhands-aci, or ``(None, reason)``.

    Installs (once per requirements version) when ``install`` is true; that needs the
    package index and takes a minute or two.
    """
    venv = venv_dir()
    python = _python(venv)
    stamp_file = venv / "callgate-bench-stamp"
    if python.exists() and stamp_file.exists() and stamp_file.read_text() == _stamp():
        return str(python), ""
    if not install:
        return None, f"openhands-aci is not installed in {venv} (run benchmarks/run.py to install)"
    print(f"installing openhands-aci into {venv} (once) ...", file=log, flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [
        [base, "-m", "venv", "--clear", str(venv)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--ignore-requires-python", "--only-binary=:all:", "-r", str(REQUIREMENTS)],
    ]
    for argv in steps:
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            lines = [x for x in (done.stderr or done.stdout).splitlines()
                     if x.strip() and not x.startswith("WARNING: Location")]
            return None, (f"openhands-aci could not be installed ({' '.join(argv[:4])} ...: "
                          f"{lines[-1] if lines else 'exit ' + str(done.returncode)})")
    stamp_file.write_text(_stamp())
    return str(python), ""


class PeerEditor:
    """openhands-aci's editor in a child process of the peers venv, timed inside that process.

    ``str_replace(path, old, new)`` returns ``{"ok", "seconds", "error"}``: the seconds
    cover the editor call only (no process start, no pipe round trip).
    """

    def __init__(self, python: str) -> None:
        self._proc = subprocess.Popen([python, str(WORKER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, bufsize=1)
        hello = self._read()
        if not hello.get("ok"):
            self.close()
            raise RuntimeError(hello.get("error") or "the peer editor did not start")
        self.version = hello.get("version", "?")

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the peer editor exited")
        return json.loads(line)

    def str_replace(self, path: str, old: str, new: str) -> dict[str, Any]:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"op": "str_replace", "path": path, "old": old,
                                           "new": new}) + "\n")
        self._proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> PeerEditor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
