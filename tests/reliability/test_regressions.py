"""Regression tests for the bugs the reliability suite found (docs/reliability.md, "Fixes").

Each test names the figure that found the bug and fails on the code before its fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize("args", [{"command": "echo a\x00b"},
                                  {"command": "echo a\x00b", "run_in_background": True}])
def test_bash_command_with_a_nul_is_an_unexecuted_argument_error(
        callgate_session: Callable[..., Any], args: dict[str, Any]) -> None:
    """Argument fuzzing: a NUL in the command crashed the launch ("bash failed: embedded null
    byte") and, in the background, left a failed job behind."""
    s = callgate_session(entrypoints=["shell"])
    r = s.call("bash", args)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False, r.text
    assert "NUL" in r.text
    assert s.call("job_output", {}).text == "No background jobs in this session."


@pytest.mark.parametrize("engine", ["rg", "python"])
@pytest.mark.parametrize("args", [{"pattern": "a\x00"}, {"pattern": "a", "glob": "*\x00"}])
def test_grep_pattern_or_glob_with_a_nul_is_an_unexecuted_argument_error(
        callgate_session: Callable[..., Any], engine: str, args: dict[str, Any]) -> None:
    """Argument fuzzing: ``grep failed: embedded null byte`` (rg takes both as arguments)."""
    s = callgate_session(entrypoints=["search"], files={"a.txt": "alpha\n"},
                         config={"search": {"grep_engine": engine}})
    r = s.call("grep", args)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False, r.text
    assert "NUL" in r.text
