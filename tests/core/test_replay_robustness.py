"""Inputs built to break the host, through ``callgate replay`` (issue 16 defect 11).

Each one gets a clear result of its own (an unexecuted argument error, or a bad-line
result), never the catch-all ``… failed:``, and the calls after it still run: a lone
surrogate in a path, a line nested 50,000 deep, bytes that are not UTF-8, arguments
stringified 100,000 deep, ``offset: 1.0``, a glob with 3,000 nested braces.
"""

from __future__ import annotations

import json

import pytest

from .test_replay_cli import lines_of, run_cli

PLUGINS = {"CALLGATE_LOAD_PLUGINS": "files,search"}
PROBE = '{"id": "probe-%d", "name": "read_file", "arguments": {"path": "a.txt"}}'


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("robust")
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    hostile = [
        '{"id": "surrogate", "name": "read_file", "arguments": {"path": "\\ud800.txt"}}',
        '{"id": "deep-line", "name": "read_file", "arguments": {"path": "a.txt", "x": '
        + "[" * 50_000 + "]" * 50_000 + "}}",
        json.dumps({"id": "deep-text", "name": "read_file",
                    "arguments": '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"}),
        json.dumps({"id": "deep-object", "name": "read_file",
                    "arguments": json.loads('{"path": "a.txt", "x": ' + "[" * 200
                                            + "]" * 200 + "}")}),
        json.dumps({"id": "float", "name": "read_file",
                    "arguments": {"path": "a.txt", "offset": 1.0, "limit": 1.0}}),
        json.dumps({"id": "fraction", "name": "read_file",
                    "arguments": {"path": "a.txt", "offset": 1.5}}),
        json.dumps({"id": "braces", "name": "glob",
                    "arguments": {"pattern": "{" * 3000 + "a" + "}" * 3000}}),
        json.dumps({"id": "braces-wide", "name": "glob",
                    "arguments": {"pattern": "{a,b}" * 3000}}),
    ]
    text = "\n".join(f"{line}\n{PROBE % i}" for i, line in enumerate(hostile)).encode()
    text += b'\n{"id": "bytes", "name": "read_file", "arguments": {"path": "\xff.txt"}}\n'
    text += (PROBE % 99).encode() + b"\n"
    transcript = tmp / "t.jsonl"
    transcript.write_bytes(text)
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), "--surface", "full",
                   env=PLUGINS)
    out = lines_of(proc.stdout)
    return {"proc": proc, "out": out,
            "by_id": {r["id"]: r for r in out if r["id"]},
            "bad_lines": [r for r in out if r["error"] and r["error"]["kind"] ==
                          "invalid_transcript"]}


def test_the_replay_runs_to_the_end_and_every_probe_succeeds(replayed) -> None:
    proc = replayed["proc"]
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    probes = [r for r in replayed["out"] if (r["id"] or "").startswith("probe-")]
    assert len(probes) == 9
    assert all(not p["is_error"] and p["content"] == "1→one\n2→two\n3→three" for p in probes)
    assert not any("failed:" in r["content"] for r in replayed["out"])


def test_a_lone_surrogate_is_an_unexecuted_argument_error(replayed) -> None:
    result = replayed["by_id"]["surrogate"]
    assert result["error"]["kind"] == "invalid_arguments"
    assert "lone surrogate" in result["content"] and "at /path" in result["content"]
    assert result["meta"]["executed"] is False


def test_too_deep_input_is_a_bad_line_or_an_argument_error(replayed) -> None:
    [deep_line, not_utf8] = replayed["bad_lines"]
    assert deep_line["meta"]["line"] == 3 and "deeper than the JSON reader" in \
        deep_line["content"]
    assert not_utf8["content"].endswith("is not UTF-8 text")
    for call_id in ("deep-text", "deep-object"):
        result = replayed["by_id"][call_id]
        assert result["error"]["kind"] == "invalid_arguments", result["content"]
        assert result["error"]["signature"].endswith(":json")
        assert "nested deeper than 64 levels" in result["content"]


def test_integral_floats_reach_integer_parameters_as_integers(replayed) -> None:
    result = replayed["by_id"]["float"]
    assert result["is_error"] is False, result["content"]
    assert result["content"].startswith("2→two\n")  # offset 1, limit 1: the tool got ints
    assert "call read_file with offset=2 to continue" in result["content"]
    fraction = replayed["by_id"]["fraction"]
    assert fraction["error"]["kind"] == "invalid_arguments"
    assert "- /offset: type; expected type integer" in fraction["content"]


def test_a_glob_with_thousands_of_nested_braces_is_refused_before_it_runs(replayed) -> None:
    result = replayed["by_id"]["braces"]
    assert result["error"]["kind"] == "invalid_arguments"
    assert "braces nest deeper than 16 levels" in result["content"]
    assert replayed["by_id"]["braces-wide"]["is_error"] is False  # wide is fine, deep is not
