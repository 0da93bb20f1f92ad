"""The stages read back from a call's record, for outcomes the host tests do not reach
(an approver's deny, a call cut off), and the diff, sparkline and snippet helpers."""

from __future__ import annotations

from typing import Any

import attrs
from callgate_ui import _view as v


@attrs.frozen
class Call:
    outcome: str = "ok"
    permission: str | None = "allow"
    decided_by: str | None = "mode:allow"
    signature: str | None = None
    is_error: bool = False


def states(call: Any) -> list[tuple[str, str, str | None]]:
    return [(s.name, s.state, s.detail) for s in v.stages(call)]


def test_stages_of_each_recorded_shape() -> None:
    assert [s for _, s, _ in states(Call())] == ["passed"] * 5
    denied = states(
        Call("blocked", "ask:deny", "approver (ask:Bash(git push:*))", "ask:Bash(git push:*)", True)
    )
    assert denied[2] == ("permission", "stopped", "approver (ask:Bash(git push:*))")
    assert [s for _, s, _ in denied[3:]] == ["skipped", "skipped"]
    cut = states(Call("interrupted", None, None))
    assert {s for _, s, _ in cut} == {"unknown"}
    failed = states(Call("tool_error", is_error=True))
    assert failed[-1] == ("tool", "failed", "tool_error") and failed[3][1] == "passed"
    assert not v.refused(Call("tool_error", is_error=True))
    assert v.refused(Call("unknown_tool", None, None, is_error=True))


def test_diff_lines_stop_where_the_diff_ends() -> None:
    text = "edited a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\nnote: done"
    assert v.diff_lines(text) == [
        ("file", "--- a/a.txt"),
        ("file", "+++ b/a.txt"),
        ("hunk", "@@ -1 +1 @@"),
        ("del", "-x"),
        ("add", "+y"),
    ]
    assert v.diff_lines("--- not a diff") is None and v.diff_lines(None) is None


def test_sparkline_and_snippet_parts() -> None:
    spark = v.sparkline([0.0, 0.1, 9.9], 0.0, 10.0, buckets=10, width=90, height=20)
    points = [tuple(map(float, p.split(","))) for p in spark["points"].split()]
    assert spark["peak"] == 2 and len(points) == 10
    assert points[0][1] == 1.0 and points[-1][1] == 10.0 and points[5][1] == 19.0
    assert v.snippet_parts("a [b] c") == [(False, "a "), (True, "b"), (False, " c")]
