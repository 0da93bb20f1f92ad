"""The storm breaker through ``callgate replay`` (issue 25 item 1).

"This same step has now failed three times" is said only when it is true: three
batches with the same calls, the same arguments (compared canonically) and the
same error. A batch counts once; a success resets the streak.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_replay_cli import lines_of, run_cli

PLUGINS = {"CALLGATE_LOAD_PLUGINS": "files,shell,capability"}
HINT = "[convergence hint]"


def _read(path: str, call_id: str, as_text: bool = False) -> dict:
    args = {"path": path}
    return {"id": call_id, "name": "read_file",
            "arguments": json.dumps(args, indent=1) if as_text else args}


def _replay(tmp_path: Path, lines: list[dict]) -> dict[str, dict]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=PLUGINS)
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in lines_of(proc.stdout)}


def test_different_missing_files_are_different_steps(tmp_path: Path) -> None:
    out = _replay(tmp_path, [_read("nope1.txt", "m1"), _read("nope2.txt", "m2"),
                             _read("nope3.txt", "m3")])
    assert [out[i]["error"]["signature"] for i in ("m1", "m2", "m3")] == ["FS_NOT_FOUND"] * 3
    assert not any(HINT in out[i]["content"] for i in ("m1", "m2", "m3"))


@pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs a POSIX shell")
def test_different_commands_failing_alike_are_different_steps(tmp_path: Path) -> None:
    commands = ["false", "test -f missing.txt", "grep -q absent a.txt"]
    out = _replay(tmp_path, [{"id": f"b{i}", "name": "bash", "arguments": {"command": c}}
                             for i, c in enumerate(commands)])
    signatures = {out[f"b{i}"]["error"]["signature"] for i in range(3)}
    assert len(signatures) == 1  # the same error each time ...
    assert not any(HINT in out[f"b{i}"]["content"] for i in range(3))  # ... not the same step


def test_the_same_call_three_times_gets_the_hint_key_order_and_json_text_alike(
        tmp_path: Path) -> None:
    out = _replay(tmp_path, [_read("gone.txt", "s1"), _read("gone.txt", "s2", as_text=True),
                             _read("gone.txt", "s3")])
    assert HINT not in out["s1"]["content"] and HINT not in out["s2"]["content"]
    assert "This same step has now failed three times" in out["s3"]["content"]


def test_a_batch_counts_once_and_a_success_resets(tmp_path: Path) -> None:
    pair = [_read("gone.txt", "x"), _read("also-gone.txt", "y")]

    def batch(tag: str) -> dict:
        return {"batch": [{**c, "id": f"{tag}{c['id']}"} for c in pair]}

    out = _replay(tmp_path, [batch("1"), batch("2"), _read("a.txt", "ok"), batch("3"),
                             batch("4"), batch("5")])
    assert not any(HINT in out[i]["content"] for i in ("1x", "1y", "2x", "2y", "3x", "4x"))
    assert out["ok"]["is_error"] is False
    assert HINT in out["5x"]["content"]  # the third batch since the success, first result
    assert HINT not in out["5y"]["content"]
