"""Issue 26, as a property: whatever bytes a file holds, every replay output line is strict
UTF-8, and no edit writes non-ASCII text into a file whose encoding is only guessed.

Random files (random bytes, legacy-encoded words, UTF-8, CRLF, tabs) go through one
transcript each, run by the replay entry point (``callgate_cli._replay.replay``, what
``callgate replay`` runs) on one host: read_file, edit_file (ASCII, then non-ASCII),
multi_edit, delete_range, write_file, an outside change and the stale refusal with its
detail, a read after it and edits that miss (the FS_NO_MATCH hints). Each result is
serialized as the CLI prints it and its bytes (with lone surrogates escaped the way a
C-locale stdout does) must decode strictly.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anyio
import callgate_files
import pytest
from callgate import Host, ToolSpec, hookimpl
from callgate_cli._replay import replay
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


class RawAppend:
    """A tool that appends bytes behind the session's back (an outside change)."""

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        def run(ctx: Any, args: dict[str, Any]) -> str:
            with open(ctx.workspace.resolve(args["path"]).path, "ab") as fh:
                fh.write(bytes.fromhex(args["hex"]))
            return "appended"

        registry.add(ToolSpec(name="raw_append", description="append bytes", execute=run,
                              schema={"type": "object", "properties": {
                                  "path": {"type": "string"}, "hex": {"type": "string"}}},
                              visibility="surface"))


WORDS = ["Тест", "Привет, мир", "你好世界", "第一行", "café déjà", "Größe", "設定ファイル"]
LEGACY = ["cp1251", "koi8_r", "gb18030", "big5", "shift_jis", "latin-1", "cp1252", "utf-8"]


def _encoded(word: str) -> st.SearchStrategy[bytes]:
    options = []
    for codec in LEGACY:
        try:
            options.append(word.encode(codec))
        except UnicodeEncodeError:
            pass
    return st.sampled_from(options)


CHUNK = st.one_of(
    st.binary(max_size=16),
    st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from(WORDS).flatmap(_encoded),
    st.sampled_from([b"\n", b"\r\n", b"\t", b"  ", b"x = 1", b"\xff", b"\xcf\xf0\xe8"]),
)
BODY = st.lists(CHUNK, max_size=12).map(b"".join)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20) | \
    st.sampled_from(["Да", "\udcff", "x\u00a0= 1", "anchor = 1\n"])


@pytest.fixture(scope="module")
def host() -> Any:
    """One host for every example (each opens and closes its own session)."""
    return Host.boot({"files": {"watch": False}}, plugins=[callgate_files, RawAppend()],
                     entrypoints=False, surface="full")


def _transcript(tail: bytes, new: str, junk: str) -> list[dict[str, Any]]:
    def c(cid: str, name: str, **arguments: Any) -> dict[str, Any]:
        return {"id": cid, "name": name, "arguments": {"path": "f.txt", **arguments}}

    return [
        c("read", "read_file"),
        c("ascii", "edit_file", old_string="anchor = 1", new_string="anchor = 2"),
        c("wide", "edit_file", old_string="anchor = 2", new_string=f'anchor = "{new}"'),
        c("multi", "multi_edit", edits=[{"old_string": "start_mark", "new_string": "begin"},
                                        {"old_string": "middle", "new_string": new or "m"}]),
        c("delete", "delete_range", start_anchor="start_mark", end_anchor="end_mark"),
        c("miss", "edit_file", old_string=junk or "q", new_string="never"),
        c("near", "edit_file", old_string="anchor = 9\n", new_string="never"),
        c("outside", "raw_append", hex=tail.hex()),
        c("stale", "edit_file", old_string="anchor", new_string="ANCHOR"),
        c("again", "read_file"),
        c("write", "write_file", content=new + junk),
    ]


async def _replay(host: Host, ws: Path, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = [json.dumps(c) for c in calls]
    out = []
    async with host.open_session(ws) as session:
        async for _entry, result in replay(session, lines):
            out.append(result)
    return out


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(head=BODY, middle=BODY, tail=BODY, new=TEXT, junk=TEXT)
def test_every_result_is_strict_utf8_and_guesses_never_take_new_text(host, head, middle, tail,
                                                                     new, junk):
    data = head + b"\nanchor = 1\n" + middle + b"\nstart_mark\nmiddle\nend_mark\n" + tail
    ws = Path(tempfile.mkdtemp(prefix="cg-i26-"))
    try:
        (ws / "f.txt").write_bytes(data)
        results = anyio.run(_replay, host, ws, _transcript(tail, new, junk))
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    by_id = {r["id"]: r for r in results}
    for result in results:
        line = json.dumps(result, ensure_ascii=False).encode("utf-8", "surrogateescape")
        line.decode("utf-8")  # strict: raises on any byte a lone surrogate became
    read = by_id["read"]
    if read["is_error"]:
        return  # binary (a NUL byte): nothing else is about encodings
    basis = read["meta"]["encoding_basis"]
    wide = by_id["wide"]
    if not by_id["ascii"]["is_error"] and not new.isascii() and basis in ("guessed", "unknown"):
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in new):
            # not Unicode text at all: refused before any tool runs (issue 16 defect 11)
            assert wide["error"]["kind"] == "invalid_arguments", wide
        else:
            assert wide["is_error"] and wide["error"]["signature"] == "FS_ENCODING_UNSETTLED", \
                wide


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=BODY, tail=BODY)
def test_an_ascii_edit_changes_only_its_own_bytes(host, head, tail):
    """Whatever the encoding (detected, guessed or unknown), an ASCII edit of an ASCII
    line gives back every other byte exactly; a refusal changes nothing."""
    data = head + b"\nanchor = 1\n" + tail
    ws = Path(tempfile.mkdtemp(prefix="cg-i26-"))
    try:
        (ws / "f.txt").write_bytes(data)
        results = anyio.run(_replay, host, ws, [
            {"id": "r", "name": "read_file", "arguments": {"path": "f.txt"}},
            {"id": "e", "name": "edit_file", "arguments": {
                "path": "f.txt", "old_string": "anchor = 1", "new_string": "anchor = 2"}}])
        final = (ws / "f.txt").read_bytes()
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    read, edit = results
    if edit["is_error"]:
        assert final == data
    elif not read["meta"]["encoding"].startswith("utf-16"):
        assert final == data.replace(b"anchor = 1", b"anchor = 2", 1)
