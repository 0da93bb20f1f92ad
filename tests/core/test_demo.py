"""``callgate demo`` (the README's main job) runs the tour and leaves the repository alone."""

from __future__ import annotations

import hashlib
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


def test_demo_replays_the_tour_without_touching_the_repository() -> None:
    before = _digest(EXAMPLES / "workspace"), (EXAMPLES / "tour.jsonl").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "callgate.cli", "demo"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for expected in ("✓ read_file", "edited src/greet.py", "FS_NOT_OBSERVED",
                     "argument validation failed for bash", "FS_STALE_VERSION",
                     "Started background job bash-1", "[bash-1] done (exit code 0)",
                     "Hello, world! Nice to see you."):
        assert expected in out, expected
    assert "Traceback" not in proc.stderr
    assert (_digest(EXAMPLES / "workspace"), (EXAMPLES / "tour.jsonl").read_bytes()) == before
