"""session:tool_result pages the session's complete results (§6, host.md §7)."""

from __future__ import annotations

import hashlib
import json
import re

from .helpers import boot, fixture_server, uc

LINE = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-=\n"


def _big(n: int) -> str:
    return (LINE * (n // len(LINE) + 1))[:n]


def _page(s, call_id=None, **arguments):
    return uc(s, call_id, action="call", capability_id="session:tool_result",
              arguments=arguments)


def _split(result):
    assert not result.is_error, result.text
    header, _, body = result.text.partition("\n")
    return json.loads(header), body


def test_a_100000_byte_mcp_result_reads_back_page_by_page(callgate_session, tmp_path):
    """§9.28"""
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             tables={"results": {"max_chars": 16384}})
    big = uc(s, "big-1", action="call", capability_id="mcp-tool:fixture/big",
             arguments={"n": 100000})
    original = _big(100000)
    assert len(big.text) <= 16384
    marker = next(line for line in big.text.splitlines() if "[truncated" in line)
    assert "result_ref=tr-" in marker and "missing_bytes=" in marker
    first_missing = int(re.search(r"missing_bytes=(\d+)-(\d+)", marker).group(1))
    follow = json.loads(re.search(r"use_capability (\{.*\})\]", marker).group(1))
    assert follow["capability_id"] == "session:tool_result"
    assert follow["arguments"]["offset"] == first_missing
    assert follow["arguments"]["tool_call_id"] == "big-1"
    # the head the model saw, then the pages from the first missing byte
    head = big.text[: big.text.index("\n…[truncated")]
    assert original.startswith(head) and len(head.encode()) == first_missing
    pieces = [head]
    arguments = dict(follow["arguments"])
    while True:
        page = s.call("use_capability", {**follow, "arguments": arguments})
        header, body = _split(page)
        assert len(page.text) <= 16384  # every page fits the visible limit
        pieces.append(body)
        if header["complete"]:
            break
        arguments["offset"] = header["next_offset"]
    assert "".join(pieces) == original
    assert header["sha256"] == hashlib.sha256(original.encode()).hexdigest()
    assert header["total_bytes"] == 100000 and header["next_offset"] is None
    assert list(header) == ["result_ref", "offset", "next_offset", "total_bytes", "sha256",
                            "complete"]
    # and from offset 0 the joined pages are the whole original
    joined, offset = [], 0
    while True:
        header, body = _split(_page(s, tool_call_id="big-1", result_ref=follow["arguments"][
            "result_ref"], offset=offset, limit=8000))
        joined.append(body)
        if header["complete"]:
            break
        offset = header["next_offset"]
    assert "".join(joined) == original


def test_offsets_inside_a_character_move_back_and_pages_stay_utf8(callgate_session, tmp_path):
    """§9.29"""
    s = boot(callgate_session, tmp_path)
    text = "é" * 20000
    r = uc(s, "accents", action="call", capability_id="tool:repeat",
           arguments={"text": "é", "times": 20000})
    assert r.text == text
    header, body = _split(_page(s, tool_call_id="accents", offset=1, limit=1001))
    assert header["offset"] == 0
    assert header["next_offset"] == 1000 and body == "é" * 500
    joined, offset = [], 0
    while True:
        header, body = _split(_page(s, tool_call_id="accents", offset=offset, limit=999))
        raw = body.encode("utf-8")
        assert raw.decode("utf-8") == body and "\ufffd" not in body
        joined.append(body)
        if header["complete"]:
            break
        assert header["next_offset"] - header["offset"] == len(raw)
        offset = header["next_offset"]
    assert "".join(joined) == text


def test_limits_subagent_ids_and_offsets_are_checked(callgate_session, tmp_path):
    """§9.30"""
    s = boot(callgate_session, tmp_path)
    uc(s, "euros", action="call", capability_id="tool:repeat",
       arguments={"text": "€", "times": 10})
    too_big = _page(s, tool_call_id="euros", limit=24577)
    assert too_big.error.kind == "invalid_arguments"
    assert "/limit: maximum" in too_big.text
    assert too_big.error.signature.startswith("argument_validation:session_tool_result:")
    tiny = _page(s, tool_call_id="euros", limit=1)
    assert tiny.is_error and "increase limit" in tiny.text
    sub = _page(s, tool_call_id="sa_ab")
    assert sub.is_error and "read_subagent_result" in sub.text
    assert sub.meta["executed"] is False
    past = _page(s, tool_call_id="euros", offset=31)
    assert past.is_error and "past the end" in past.text
    end_header, end_body = _split(_page(s, tool_call_id="euros", offset=30))
    assert end_body == "" and end_header["complete"] is True
    nothing = _page(s, tool_call_id="never-ran")
    assert nothing.error.kind == "not_found"
    bad_ref = _page(s, tool_call_id="euros", result_ref="tr-" + "0" * 24)
    assert bad_ref.error.kind == "not_found" and "does not belong" in bad_ref.text
    malformed = _page(s, tool_call_id="euros", result_ref="tr-xyz")
    assert malformed.error.kind == "invalid_arguments"


def test_a_repeated_call_id_needs_its_result_ref(callgate_session, tmp_path):
    """§9.31"""
    s = boot(callgate_session, tmp_path)
    for _ in range(2):
        [r] = s.run({"id": "dup", "name": "use_capability", "arguments": {
            "action": "call", "capability_id": "tool:repeat",
            "arguments": {"text": "same ", "times": 3}}})
        assert r.text == "same same same "
    ambiguous = _page(s, tool_call_id="dup")
    assert ambiguous.is_error
    assert 'ambiguous tool_call_id "dup"; pass result_ref: ' in ambiguous.text
    refs = re.findall(r"tr-[0-9a-f]{24}", ambiguous.text)
    assert len(refs) == 2 and refs[0] != refs[1]
    for ref in refs:
        header, body = _split(_page(s, tool_call_id="dup", result_ref=ref))
        assert header["result_ref"] == ref and body == "same same same "


def test_evicted_results_say_so(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, tables={"results": {"store_max_bytes": 4096}})
    uc(s, "old", action="call", capability_id="tool:repeat",
       arguments={"text": "a", "times": 3000})
    uc(s, "new", action="call", capability_id="tool:repeat",
       arguments={"text": "b", "times": 3000})
    gone = _page(s, tool_call_id="old")
    assert gone.error.kind == "not_found"
    assert "is no longer retained; re-run the tool" in gone.text


def test_the_reader_is_bound_to_its_own_session(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    uc(s, "mine", action="call", capability_id="tool:repeat", arguments={"text": "x",
                                                                        "times": 2})
    child = s.child()
    assert _page(child, tool_call_id="mine").error.kind == "not_found"
    _header, body = _split(_page(s, tool_call_id="mine"))
    assert body == "xx"
