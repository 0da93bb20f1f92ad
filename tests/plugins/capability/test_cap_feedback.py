"""Argument feedback that must keep what matters, through ``callgate replay``.

Issue 25 item 2: target parameters sent at ``use_capability``'s root are told they belong
inside ``arguments`` when, moved there, they satisfy the target's schema (and only then).
Item 3: with enormous property names the feedback stays within 4 KiB and still holds its
first line, the line saying where the parameters belong, and the signature.
"""

from __future__ import annotations

import json

import pytest

from tests.core.test_replay_cli import lines_of, run_cli

PLUGINS = {"CALLGATE_LOAD_PLUGINS": "files,capability"}
ROOT_LINE = "These parameters belong at the root of "
INSIDE = "belong inside use_capability.arguments"


def _uc(call_id: str, **args: object) -> dict:
    return {"id": call_id, "name": "use_capability", "arguments": args}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("feedback")
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    huge = {f"k{i}_" + "x" * 5000: 1 for i in range(40)}
    lines = [
        _uc("stray", action="call", capability_id="tool:read_file", path="a.txt"),
        _uc("stray-two", action="call", capability_id="tool:read_file", path="a.txt",
            offset=1),
        _uc("stray-bad", action="call", capability_id="tool:read_file", path="a.txt",
            colour="red"),
        _uc("stray-list", action="list", path="a.txt"),
        _uc("stray-unknown", action="call", capability_id="tool:nope", path="a.txt"),
        _uc("fixed", action="call", capability_id="tool:read_file",
            arguments={"path": "a.txt"}),
        {"id": "huge-root", "name": "read_file", "arguments": {"path": "a.txt", **huge}},
        _uc("huge-inside", action="call", capability_id="tool:read_file",
            arguments={"path": "a.txt", **huge}),
        _uc("huge-stray", action="call", capability_id="tool:read_file", **huge),
    ]
    transcript = tmp / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=PLUGINS)
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in lines_of(proc.stdout)}


def test_stray_target_parameters_are_pointed_into_arguments(out) -> None:
    one = out["stray"]
    assert one["error"]["kind"] == "invalid_arguments"
    assert ("The parameter path belongs inside use_capability.arguments (the input of "
            "tool:read_file), not at the root of use_capability's input; move it into "
            '"arguments" and call again.') in one["content"]
    assert ROOT_LINE not in one["content"]
    assert '"a.txt"' not in one["content"]  # value-free
    assert "The parameters offset, path belong inside" in out["stray-two"]["content"]
    assert out["fixed"]["is_error"] is False


@pytest.mark.parametrize("call_id", ["stray-bad", "stray-list", "stray-unknown"])
def test_the_usual_advice_when_moving_them_would_not_help(out, call_id) -> None:
    result = out[call_id]
    assert result["error"]["kind"] in ("invalid_arguments", "unavailable"), result["content"]
    assert INSIDE not in result["content"]
    if result["error"]["kind"] == "invalid_arguments":
        assert ROOT_LINE + "use_capability's input" in result["content"]


@pytest.mark.parametrize(("call_id", "placement"), [
    ("huge-root", ROOT_LINE + "read_file's input"),
    ("huge-inside", "These parameters belong inside use_capability.arguments (the input of "
                    "read_file)"),
    ("huge-stray", ROOT_LINE + "use_capability's input"),
])
def test_huge_property_names_never_push_out_the_lines_that_matter(out, call_id,
                                                                   placement) -> None:
    result = out[call_id]
    text = result["content"]
    assert result["error"]["kind"] == "invalid_arguments"
    assert len(text.encode()) <= 4096
    assert text.startswith("argument validation failed for ")
    assert placement in text
    assert text.endswith(f"signature: {result['error']['signature']}")
    assert "x" * 200 not in text  # each name is clipped in the middle
    assert "more" in text  # and the list of names is cut with a count
