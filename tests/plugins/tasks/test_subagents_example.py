"""examples/subagents.py runs offline: two scripted subagents, one result read in pages."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "subagents.py"


def test_subagents_example_runs_as_a_script() -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "SCRIPTED (FAKE) MODELS" in out
    assert out.count("Subagent reference: sa_") == 2
    assert "[preview truncated; read the full result with read_subagent_result" in out
    assert "bytes 0-5288 of " in out and "End of subagent result." in out
    assert "identical to the child's answer: True" in out
    assert "parent todos: 0" in out


def test_subagents_example_result() -> None:
    summary = runpy.run_path(str(EXAMPLE), run_name="subagents_example")["main"]()
    assert len(set(summary["refs"])) == 2
    assert summary["pages"] >= 3 and summary["identical"] is True
    assert summary["preview_chars"] <= 6000 - 512
