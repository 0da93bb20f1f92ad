"""Confinement race, the model-only attack (issue 16, defect 1): a transcript that needs nothing
but tool calls. It sets up a directory ``d`` and a symlink ``d_swap`` to a directory outside
the workspace with ``bash``, writes the racer script with ``write_file``, starts it with
``bash`` ``run_in_background``, then reads and writes ``d/f.txt`` many times. Run through
``callgate replay`` with the bubblewrap sandbox on (the racer confined to the workspace, as a
sandbox promises) and off. Before the fix the file outside was overwritten within seconds;
now no result shows its bytes and it is untouched.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from callgate.testing import run_replay

from ._racer import MARK, RACER_SOURCE, differences, tree_state

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="the racer uses renameat2(RENAME_EXCHANGE) (Linux)")


def _bwrap_works() -> tuple[bool, str]:
    if shutil.which("bwrap") is None:
        return False, "bwrap is not installed"
    try:
        import callgate_sandbox
    except ImportError:
        return False, "callgate-sandbox is not installed"
    probe = callgate_sandbox.BwrapBackend().probe()
    return probe.ok, probe.detail


def transcript(outside: Path, pairs: int, racer_seconds: float) -> list[dict[str, Any]]:
    """What a model would send: setup, the racer, then ``pairs`` read + write rounds."""
    lines: list[dict[str, Any]] = [
        {"id": "setup", "name": "bash", "arguments": {
            "command": f"mkdir -p d && printf 'inside\\n' > d/f.txt && ln -s {outside} d_swap"}},
        {"id": "script", "name": "write_file", "arguments": {"path": "racer.py",
                                                              "content": RACER_SOURCE}},
        {"id": "start", "name": "bash", "arguments": {
            "command": f"{sys.executable} racer.py d d_swap {racer_seconds}",
            "run_in_background": True}},
    ]
    for i in range(pairs):
        lines.append({"id": f"r{i}", "name": "read_file", "arguments": {"path": "d/f.txt"}})
        lines.append({"id": f"w{i}", "name": "write_file",
                      "arguments": {"path": "d/f.txt", "content": f"written {i}\n"}})
    return lines


@pytest.mark.parametrize("sandbox", [True, False], ids=["bwrap", "no-sandbox"])
def test_a_model_only_racer_never_overwrites_a_file_outside(
        tmp_path: Path, sandbox: bool, cases: Callable[[int, int], int],
        figure: Callable[..., None]) -> None:
    if sandbox:
        ok, why = _bwrap_works()
        if not ok:
            pytest.skip(f"bubblewrap cannot run here: {why}")
    pairs = cases(3000, 400)
    ws, outside = tmp_path / "w", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "f.txt").write_text(f"{MARK}\n")
    config = tmp_path / "callgate.toml"  # the user's config: outside the workspace
    config.write_text(f"[sandbox]\nenabled = {'true' if sandbox else 'false'}\n"
                      "[files]\nwatch = false\n")
    before = tree_state(outside)
    results = run_replay(transcript(outside, pairs, racer_seconds=pairs / 40), ws,
                         "--config", str(config), "--surface", "full", "--approve", "all",
                         env={"CALLGATE_LOAD_PLUGINS": "files,shell,sandbox"}, timeout=600)
    by_id = {r["id"]: r for r in results}
    assert not by_id["setup"].get("is_error"), by_id["setup"]
    assert not by_id["start"].get("is_error"), by_id["start"]
    text = json.dumps(results)
    leaked = text.count(MARK)
    written = sum(1 for r in results if str(r["id"]).startswith("w")
                  and not r.get("is_error"))
    changed = differences(before, tree_state(outside))
    figure(f"confinement race: model-only transcript ({'bwrap' if sandbox else 'no sandbox'})",
           pairs=pairs, writes_ok=written, leaked=leaked, outside_effects=leaked + len(changed))
    assert leaked == 0
    assert changed == [], changed
    assert (outside / "f.txt").read_text() == f"{MARK}\n"
