"""Session directories (issue 16, defect 9): the stored results of one session are its own.

Before the fix every store wrote ``<session_dir>/results/<seq>.txt`` with ``open(.., "wb")``:
two sessions sharing a session directory overwrote (and then paged) each other's results, and
a symlink a model planted at ``results/00000001.txt`` (or at ``results`` itself) inside the
workspace made the host overwrite the file it pointed to. Since issue 18 a session's results
live in the session store, and nothing is written under the session directory at all; with
``[sessions] record = "off"`` they spill to a private temporary directory, where each store
has a random id in its file names, files are created exclusively without following a link,
and read back only if still the file written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from callgate import ToolError

from . import _emit_tool

BIG = 100_000  # over the 64 KiB a result may keep in memory: it goes to disk


def page_all(session: Any, call_id: str, ref: str) -> str:
    """The whole stored result, paged from offset 0 (JSON header lines dropped)."""
    import json

    out, offset = [], 0
    while offset is not None:
        header, _, body = session.results.page(call_id, ref, offset).partition("\n")
        out.append(body)
        offset = json.loads(header)["next_offset"]
    return "".join(out)


def test_two_sessions_sharing_a_session_dir_keep_their_own_results(
        callgate_session: Callable[..., Any], tmp_path: Path) -> None:
    shared = tmp_path / "session"
    a = callgate_session(plugins=[_emit_tool], session_dir=shared)
    b = callgate_session(plugins=[_emit_tool], session_dir=shared, host=a.host)
    texts = {"a": "A" * BIG, "b": "B" * BIG}
    [ra] = a.run({"id": "c1", "name": "emit", "arguments": {"text": texts["a"]}})
    [rb] = b.run({"id": "c1", "name": "emit", "arguments": {"text": texts["b"]}})
    assert ra.meta["truncated"] and rb.meta["truncated"]
    assert page_all(a.session, "c1", ra.meta["result_ref"]) == texts["a"]
    assert page_all(b.session, "c1", rb.meta["result_ref"]) == texts["b"]
    assert os.listdir(shared) == []  # nothing of the results is kept there


def test_unrecorded_sessions_spill_to_private_directories(
        callgate_session: Callable[..., Any], tmp_path: Path) -> None:
    shared = tmp_path / "session"
    off = {"sessions": {"record": "off"}}
    a = callgate_session(plugins=[_emit_tool], session_dir=shared, config=off)
    b = callgate_session(plugins=[_emit_tool], session_dir=shared, host=a.host)
    [ra] = a.run({"id": "c1", "name": "emit", "arguments": {"text": "A" * BIG}})
    [rb] = b.run({"id": "c1", "name": "emit", "arguments": {"text": "B" * BIG}})
    assert page_all(a.session, "c1", ra.meta["result_ref"]) == "A" * BIG
    assert page_all(b.session, "c1", rb.meta["result_ref"]) == "B" * BIG
    spill = a.session.results._directory
    assert spill is not None and not spill.startswith(str(shared))
    assert os.stat(spill).st_mode & 0o077 == 0


def test_a_planted_symlink_in_the_results_dir_is_never_followed(
        callgate_session: Callable[..., Any], tmp_path: Path) -> None:
    """The model plants links at the names the old layout used, with bash; a large result
    then lands in a file of the store's own, and the files the links point to are intact."""
    ws, outside = tmp_path / "w", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious\n")
    session_dir = ws / ".sessions" / "s1"
    s = callgate_session(plugins=[_emit_tool], entrypoints=["shell"], workspace=ws,
                         session_dir=session_dir)
    plant = "; ".join(f"ln -s {victim} .sessions/s1/results/{n:08d}.txt" for n in range(1, 9))
    r = s.call("bash", command=f"mkdir -p .sessions/s1/results && {plant} && echo planted")
    assert "planted" in r.text, r.text
    [big] = s.run({"id": "c1", "name": "emit", "arguments": {"text": "x" * BIG}})
    assert victim.read_text() == "precious\n"
    assert page_all(s.session, "c1", big.meta["result_ref"]) == "x" * BIG
    r = s.call("bash", command="head -c 100000 /dev/zero | tr '\\0' y")
    assert victim.read_text() == "precious\n" and r.meta.get("truncated"), r.meta


def test_a_results_dir_planted_as_a_symlink_is_not_used(
        callgate_session: Callable[..., Any], tmp_path: Path) -> None:
    ws, outside = tmp_path / "w", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    session_dir = ws / ".sessions" / "s1"
    s = callgate_session(plugins=[_emit_tool], entrypoints=["shell"], workspace=ws,
                         session_dir=session_dir)
    r = s.call("bash", command=f"ln -s {outside} .sessions/s1/results && echo planted")
    assert "planted" in r.text, r.text
    [big] = s.run({"id": "c1", "name": "emit", "arguments": {"text": "z" * BIG}})
    assert os.listdir(outside) == []
    assert page_all(s.session, "c1", big.meta["result_ref"]) == "z" * BIG


def test_a_result_file_replaced_after_it_was_written_is_not_read(
        callgate_session: Callable[..., Any], tmp_path: Path) -> None:
    """Swapping the spilled file for a link to a secret (or any other file) makes the
    result "no longer retained"; its bytes never come back as the result."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-5c2e\n" * 10_000)
    s = callgate_session(plugins=[_emit_tool], session_dir=tmp_path / "session",
                         config={"sessions": {"record": "off"}})
    [big] = s.run({"id": "c1", "name": "emit", "arguments": {"text": "q" * BIG}})
    [stored] = list(Path(s.session.results._directory).iterdir())
    stored.unlink()
    stored.symlink_to(secret)
    try:
        text = page_all(s.session, "c1", big.meta["result_ref"])
    except ToolError as exc:
        assert exc.kind == "not_found" and "no longer retained" in exc.message
    else:
        raise AssertionError(f"a replaced result file was read: {text[:40]!r}")
