"""The result store, the truncation marker and paging: host.md §7, statements 11 and 19."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from callgate import ProxyRoute, ToolError, ToolSpec, hookimpl
from callgate._results.results import ResultStore, page_text

MARKER = re.compile(
    r"…\[truncated tool=(?P<tool>\S+) call_id=(?P<call_id>\S+) result_ref=(?P<ref>tr-[0-9a-f]{24}) "
    r"original_bytes=(?P<n>\d+) kept_bytes=(?P<k>\d+) missing_bytes=(?P<a>\d+)-(?P<b>\d+) — "
    r"(?P<how>.*)\]…")


def _page(call_id: str, ref: str, offset: int) -> str:
    call = json.dumps({"action": "call", "capability_id": "session:tool_result",
                       "arguments": {"tool_call_id": call_id, "result_ref": ref,
                                     "offset": offset}}, separators=(",", ":"))
    return f"the full result is kept; read the rest with use_capability {call}"


ROUTE = ProxyRoute(hidden_tool='call it through use_capability with capability_id "tool:{name}"',
                   arguments="inside use_capability.arguments", result_page=_page)


def long_text(chars: int) -> str:
    """Numbered lines with one-, two-, three- and four-byte characters, ``chars`` long."""
    line = "{:07d} aé€😀 " + "z" * 20 + "\n"
    text = "".join(line.format(i) for i in range(chars // 30 + 1))
    return text[:chars]


class Producer:
    """``emit`` returns exactly the text it is given; ``notify`` queues a notice."""

    __name__ = "producer"

    def __init__(self, capability: bool = False) -> None:
        self.capability = capability

    @staticmethod
    def _emit(ctx: Any, args: dict[str, Any]) -> str:
        if args.get("notice"):
            ctx.notify(args["notice"])
        return args["text"]

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(name="emit", description="Return the text.", read_only=True,
                              schema={"type": "object", "properties": {
                                  "text": {"type": "string"}, "notice": {"type": "string"}},
                                  "required": ["text"], "additionalProperties": False},
                              execute=self._emit))
        if self.capability:  # stands in for the capability plugin's proxy and its route
            registry.add(ToolSpec(name="use_capability", description="Proxy.", read_only=True,
                                  schema={"type": "object"}, execute=lambda ctx, args: "ok",
                                  visibility="surface", route=ROUTE))


def page_all(store: ResultStore, call_id: str, ref: str | None = None,
             limit: int = 16_384) -> tuple[bytes, list[dict[str, Any]]]:
    """Page a stored result from offset 0 to the end; returns its bytes and every header."""
    offset, data, headers = 0, b"", []
    while True:
        page = store.page(call_id, ref, offset, limit)
        header_line, body = page.split("\n", 1)
        header = json.loads(header_line)
        assert list(header) == ["result_ref", "offset", "next_offset", "total_bytes", "sha256",
                                "complete"]
        headers.append(header)
        raw = body.encode("utf-8")  # raises if a page were not valid UTF-8
        assert header["offset"] == offset
        data += raw
        if header["complete"]:
            assert header["next_offset"] is None
            return data, headers
        assert header["next_offset"] == offset + len(raw)
        offset = header["next_offset"]


# --- statement 11 --------------------------------------------------------------------------

@pytest.mark.parametrize("capability", [False, True])
def test_stmt11_long_result_is_truncated_with_a_ref_and_pages_back_whole(callgate_session,
                                                                         capability) -> None:
    s = callgate_session(plugins=[Producer(capability)])
    text = long_text(100_000)
    [r] = s.run({"id": "call-1", "name": "emit", "arguments": {"text": text}})
    shown = r.text
    assert len(shown) <= 30_000
    head, marker_line, tail = _split_marker(shown)
    assert text.startswith(head) and text.endswith(tail) and len(head) > 10_000
    m = MARKER.fullmatch(marker_line)
    assert m, marker_line
    total = len(text.encode())
    a, b = int(m["a"]), int(m["b"])
    assert (m["tool"], m["call_id"], int(m["n"])) == ("emit", "call-1", total)
    assert a == len(head.encode()) and b == total - len(tail.encode())
    assert int(m["k"]) == a + (total - b)
    assert r.meta["result_ref"] == m["ref"] and r.meta["truncated"] is True
    assert r.meta["missing_bytes"] == [a, b]
    if capability:
        call = json.loads(m["how"].split("use_capability ", 1)[1])
        assert call == {"action": "call", "capability_id": "session:tool_result",
                        "arguments": {"tool_call_id": "call-1", "result_ref": m["ref"],
                                      "offset": a}}
    else:
        assert m["how"] == "re-run the tool with narrower arguments"

    data, headers = page_all(s.session.results, "call-1", m["ref"])
    assert data == text.encode()
    assert headers[0]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert {h["sha256"] for h in headers} == {headers[0]["sha256"]}
    assert {h["total_bytes"] for h in headers} == {total}
    # the marker's offset starts the missing range exactly
    header, body = s.session.results.page("call-1", m["ref"], a, 100).split("\n", 1)
    assert json.loads(header)["offset"] == a
    assert 96 < len(body.encode()) <= 100 and text.encode()[a:].startswith(body.encode())


def _split_marker(shown: str) -> tuple[str, str, str]:
    start = shown.index("\n…[truncated ")
    end = shown.index("]…\n", start)
    return shown[:start], shown[start + 1:end + 2], shown[end + 3:]


def test_short_results_are_stored_whole_but_never_marked(callgate_session) -> None:
    s = callgate_session(plugins=[Producer()])
    [r] = s.run({"id": "c1", "name": "emit", "arguments": {"text": "x" * 29_999}})
    assert r.text == "x" * 29_999 and "truncated" not in r.meta
    data, _ = page_all(s.session.results, "c1")
    assert data == b"x" * 29_999


def test_limit_counts_notices_and_truncation_leaves_room_for_them(callgate_session) -> None:
    s = callgate_session(plugins=[Producer()], config={"results": {"max_chars": 5_000}})
    [r] = s.run({"id": "c1", "name": "emit",
                 "arguments": {"text": "y" * 4_990, "notice": "job j1 finished " + "n" * 300}})
    assert len(r.text) <= 5_000
    assert r.text.endswith("\n\njob j1 finished " + "n" * 300)
    assert "…[truncated tool=emit" in r.text
    data, _ = page_all(s.session.results, "c1")
    assert data == b"y" * 4_990  # the stored text is the tool's, without notices


def test_marker_fields_are_bounded_and_long_call_ids_still_page(callgate_session) -> None:
    s = callgate_session(plugins=[Producer(capability=True)],
                         config={"results": {"max_chars": 2_000}})
    call_id = "id-" + "é" * 200
    [r] = s.run({"id": call_id, "name": "emit", "arguments": {"text": long_text(10_000)}})
    m = MARKER.search(r.text)
    assert m and len(m["call_id"].encode()) <= 128
    assert all(len(m[f].encode()) <= 128 for f in ("tool", "ref", "n", "k", "a", "b"))
    call = json.loads(m["how"].split("use_capability ", 1)[1])["arguments"]
    data, _ = page_all(s.session.results, call["tool_call_id"], call["result_ref"])
    assert data == long_text(10_000).encode()


# --- refs ----------------------------------------------------------------------------------------

def test_result_ref_is_the_documented_hash_and_never_repeats(tmp_path: Path) -> None:
    store = ResultStore(str(tmp_path / "results"))
    first = store.add("c1", "emit", "same output")
    second = store.add("c1", "emit", "same output")
    for item, seq in ((first, 1), (second, 2)):
        digest = hashlib.sha256(b"c1\0" + str(seq).encode() + b"\0same output").hexdigest()
        assert item.ref == "tr-" + digest[:24]
    assert first.ref != second.ref
    with pytest.raises(ToolError) as err:
        store.page("c1")
    assert err.value.kind == "tool_error"
    assert err.value.message == (f'ambiguous tool_call_id "c1"; pass result_ref: '
                                 f"{first.ref}, {second.ref}")
    assert store.page("c1", second.ref).endswith("\nsame output")
    with pytest.raises(ToolError) as err:
        store.page("c1", "tr-" + "0" * 24)
    assert err.value.kind == "not_found" and first.ref in err.value.message
    with pytest.raises(ToolError) as err:
        store.page("c2")
    assert err.value.kind == "not_found" and '"c2"' in err.value.message


# --- statement 19 and the paging edges ------------------------------------------------

def test_stmt19_offset_inside_a_character_moves_back_to_its_first_byte() -> None:
    store = ResultStore()
    store.add("c1", "emit", "é" * 20_000)
    header, body = store.page("c1", offset=1, limit=100).split("\n", 1)
    assert json.loads(header)["offset"] == 0 and json.loads(header)["next_offset"] == 100
    assert body == "é" * 50
    # odd limits end on a character boundary; every page decodes; the pages rebuild the text
    for limit in (1_001, 3, 2):
        data, headers = page_all(store, "c1", limit=limit)
        assert data.decode() == "é" * 20_000
        assert all(h["next_offset"] is None or h["next_offset"] % 2 == 0 for h in headers)
    store.close()


def test_paging_edges() -> None:
    store = ResultStore()
    text = "ab😀"  # 6 bytes
    ref = store.add("c1", "emit", text).ref
    end = json.loads(store.page("c1", offset=6).split("\n", 1)[0])
    assert end == {"result_ref": ref, "offset": 6, "next_offset": None, "total_bytes": 6,
                   "sha256": hashlib.sha256(text.encode()).hexdigest(), "complete": True}
    assert store.page("c1", offset=6).split("\n", 1)[1] == ""
    assert store.page("c1", offset=4, limit=4).split("\n", 1)[1] == "😀"  # 4 → back to 2
    with pytest.raises(ToolError) as err:
        store.page("c1", offset=7)
    assert err.value.message == f"offset 7 is past the end of result {ref} (total_bytes 6)"
    with pytest.raises(ToolError) as err:
        store.page("c1", offset=-1)
    assert err.value.message == "offset -1 is negative; use a byte offset from 0 to " \
        "total_bytes 6"
    with pytest.raises(ToolError, match="increase limit"):
        store.page("c1", offset=2, limit=3)
    assert page_text(ref, text.encode(), 0, 2).endswith("\nab")


# --- the store: on disk, bounded, oldest evicted first --------------------------------------------

def test_large_results_live_in_the_session_store_not_the_directory(callgate_session,
                                                                     tmp_path: Path) -> None:
    session_dir = tmp_path / "session"
    s = callgate_session(plugins=[Producer()], session_dir=session_dir)
    text = long_text(100_000)
    [r] = s.run({"id": "c1", "name": "emit", "arguments": {"text": text}})
    s.session.flush()
    assert not (session_dir / "results").exists()  # the old results/<seq>.txt layout is gone
    [call] = s.session.store.calls(s.session.id)
    assert call.text == text and call.result_ref == r.meta["result_ref"]
    assert call.shown == r.text and call.result_bytes == len(text.encode())


@pytest.mark.parametrize("start_applied_first", [False, True])
def test_eviction_drops_the_oldest_whole_and_says_so(callgate_session, tmp_path: Path,
                                                     start_applied_first: bool) -> None:
    session_dir = tmp_path / "session"
    s = callgate_session(plugins=[Producer()], session_dir=session_dir,
                         config={"results": {"store_max_bytes": 250_000}})
    if start_applied_first:  # the recorder wrote each call's start before its end came
        journal = s.session.journal
        call_ended = journal.call_ended

        def flushed_first(*args: Any, **kwargs: Any) -> Any:
            journal.recorder.flush()
            return call_ended(*args, **kwargs)

        journal.call_ended = flushed_first
    texts = {f"c{i}": long_text(100_000 + i) for i in range(1, 4)}
    refs = {}
    for call_id, text in texts.items():
        [r] = s.run({"id": call_id, "name": "emit", "arguments": {"text": text}})
        refs[call_id] = r.meta["result_ref"]
    store = s.session.results
    assert store.total_bytes <= 250_000 and len(store) == 2
    with pytest.raises(ToolError) as err:
        store.page("c1", refs["c1"])
    assert err.value.kind == "not_found"
    assert err.value.message == (f"result {refs['c1']} is no longer retained; "
                                 "re-run the tool")
    with pytest.raises(ToolError, match="no longer retained"):
        store.page("c1")
    for call_id in ("c2", "c3"):
        assert page_all(store, call_id, refs[call_id])[0] == texts[call_id].encode()
    s.session.flush()  # the session store drops the evicted complete text too
    kept = {c.call_id: c.text for c in s.session.store.calls(s.session.id)}
    assert kept == {"c1": None, "c2": texts["c2"], "c3": texts["c3"]}


def test_small_results_spill_to_disk_beyond_the_memory_budget(tmp_path: Path) -> None:
    directory = tmp_path / "results"
    store = ResultStore(str(directory), max_bytes=620_000, memory_budget=200_000)
    for i in range(10):
        store.add(f"c{i}", "emit", str(i) * 60_000)
    assert store.memory_bytes == 180_000  # three kept in memory, the rest written out
    assert store.total_bytes == 600_000 and len(os.listdir(directory)) == 7
    for i in range(10):
        assert page_all(store, f"c{i}", limit=24_576)[0] == str(i).encode() * 60_000
    store.add("c10", "emit", "x" * 60_000)  # over the budget: to disk; evicts c0 (memory)
    assert store.memory_bytes == 120_000 and len(store) == 10
    assert len(os.listdir(directory)) == 8
    store.close()


# --- a long session: bounded in memory whatever the number of calls (issue 34, item 1) ------

def test_a_long_session_holds_its_budget_and_index_and_pages_old_results_from_the_store(
        callgate_session) -> None:
    """Committed results let go of their record (the call's text and arguments) at once, and
    only the newest `INDEX_MAX` stay indexed; the older ones page back from the store."""
    from callgate._results import results as _results

    s = callgate_session(plugins=[Producer()])
    store = s.session.results
    budget = 300_000
    store.memory_budget = budget
    index_max = getattr(_results, "INDEX_MAX", 1024)
    calls = index_max + 300
    texts = {f"c{i}": f"{i:05d} " + "y" * 1_994 for i in range(calls)}
    for call_id, text in texts.items():
        s.run({"id": call_id, "name": "emit", "arguments": {"text": text}})
    s.session.flush()
    store.add("probe", "emit", "settles what the last call left")  # (settled at the commit)
    held = store.listing()
    assert len(held) <= index_max + 2
    assert store.memory_bytes <= budget + 64 * 1024
    assert all(item.end is None for item in held[:-2]), "a committed record is still held"
    assert sum(item.total_bytes for item in held if item.data is not None) <= store.memory_bytes
    for call_id in ("c0", "c1", f"c{calls - 1}"):  # forgotten here, found in the store
        assert page_all(store, call_id)[0] == texts[call_id].encode()
