"""examples/goal_loop.py runs offline and drives rounds until the scripted model completes."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "goal_loop.py"


def test_goal_loop_example_runs_as_a_script() -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "SCRIPTED (FAKE) MODEL" in out
    assert "[prompt] Automatic goal round 1 of 5. Objective: Ship v1" in out
    assert "[error] update_goal [GOAL_USER_AUTHORITY_REQUIRED]: pause needs a direct human turn" \
        in out
    assert "loop finished after rounds [1, 2, 3]: phase=complete stop_reason=complete" in out
    assert "after a restart: phase=complete armed=False should_continue=False" in out


def test_goal_loop_example_result() -> None:
    summary = runpy.run_path(str(EXAMPLE), run_name="goal_loop_example")["main"]()
    assert summary["rounds"] == [1, 2, 3]
    assert summary["refused"] == ["GOAL_USER_AUTHORITY_REQUIRED"]
    final = summary["final"]
    assert (final["phase"], final["revision"], final["rounds_started"]) == ("complete", 2, 3)
    assert summary["restored"] == final
