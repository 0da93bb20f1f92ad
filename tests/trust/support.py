"""Front doors for the trust attacks: ``callgate replay`` and ``callgate sessions`` run as
subprocesses with the test's private ``$CALLGATE_HOME`` / ``$CALLGATE_CONFIG_HOME``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: a recorded secret the attacks go after (its words are what ``history`` searches for)
SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYzq9secret"
SECRET_WORD = "wJalrXUtnFEMIK7MDENGbPxRfiCYzq9secret"
#: what only the recorded secret holds (a search echoes its query, so never SECRET_WORD)
LEAKED = "AWS_SECRET_ACCESS_KEY"


def replay(workspace: Path, lines: list[dict[str, Any]], *extra: str,
           plugins: str = "files,shell,capability,sessions",
           env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``callgate replay`` of ``lines`` in a fresh process; its results by call id."""
    transcript = workspace.parent / f"t{os.urandom(4).hex()}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--surface", "full", *extra],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": plugins, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}


def sessions_cli(*args: str, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    """``callgate sessions ARGS``, its output as the bytes it wrote (decoded, nothing
    escaped by Python)."""
    return subprocess.run([sys.executable, "-m", "callgate_cli", "sessions", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
