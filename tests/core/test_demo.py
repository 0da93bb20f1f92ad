"""``callgate demo`` (the README's main job) runs the tour and leaves the repository alone."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_demo_replays_the_tour_without_touching_the_repository(tmp_path: Path) -> None:
    before = _digest(EXAMPLES / "workspace"), (EXAMPLES / "tour.jsonl").read_bytes()
    # no CALLGATE_HOME: the demo itself must keep what the tour remembers out of the
    # user's state directory (here a fake home's)
    env = {k: v for k, v in os.environ.items() if k != "CALLGATE_HOME"}
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "state"),
               LOCALAPPDATA=str(tmp_path / "appdata"))
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "demo"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for expected in ("✓ read_file", "edited src/greet.py", "FS_NOT_OBSERVED",
                     "argument validation failed for bash", "FS_STALE_VERSION",
                     "Started background job bash-1", "[bash-1] done (exit code 0)",
                     "Hello, world! Nice to see you.", "Saved new memory project/greeting-style",
                     "1 memory match 'friendly greeting'"):
        assert expected in out, expected
    assert "Traceback" not in proc.stderr
    assert (_digest(EXAMPLES / "workspace"), (EXAMPLES / "tour.jsonl").read_bytes()) == before
    assert not (tmp_path / "state").exists() and not (tmp_path / "home" / ".local").exists()
