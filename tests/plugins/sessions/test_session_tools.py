"""list_sessions, read_session and history through the pipeline (issue 18): what earlier
sessions of the workspace said and did, ranked search with snippets, the entries around a
match; other workspaces' sessions refused exactly as unknown ones unless the host allows
global history; the tools hidden and reached through use_capability."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import callgate_providers as providers
import callgate_sessions
import pytest
from callgate import ToolCall, sync

PLUGINS = [callgate_sessions, callgate_files]


@pytest.fixture
def boot() -> Any:
    made: list[sync.Host] = []

    def make(config: dict[str, Any] | None = None, surface: str = "full",
             extra: tuple[Any, ...] = ()) -> sync.Host:
        host = sync.Host.boot(config or {}, plugins=[*PLUGINS, *extra], entrypoints=False,
                              surface=surface)
        made.append(host)
        return host

    yield make
    for host in made:
        host.close()


def workspace(tmp_path: Path, name: str) -> Path:
    w = tmp_path / name
    w.mkdir()
    (w / "parser.py").write_text("def parse(text):\n    return text.split()\n")
    return w


def earlier_session(host: sync.Host, ws: Path, **opened: Any) -> str:
    """A session as an integrator records it: messages and the calls between them."""
    s = host.open_session(ws, **opened)
    s.record_message("user", "The tokenizer splits on tabs wrongly; please fix parse()")
    s.run(ToolCall("c1", "read_file", {"path": "parser.py"}))
    s.record_message("assistant", "parse() uses str.split; I will make it split on spaces")
    s.run(ToolCall("c2", "edit_file", {"path": "parser.py", "old_string": "text.split()",
                                       "new_string": "text.split(' ')"}))
    s.run(ToolCall("c3", "edit_file", {"path": "missing.py", "old_string": "a",
                                       "new_string": "b"}))
    s.record_message("assistant", "Done: parse() now splits on single spaces")
    sid = s.id
    s.close()
    return sid


def call(s: Any, name: str, **arguments: Any) -> Any:
    return s.run(ToolCall("t", name, arguments))


def test_list_sessions_shows_this_workspaces_sessions_newest_first(boot: Any,
                                                                  tmp_path: Path) -> None:
    host = boot()
    ws, other = workspace(tmp_path, "ws"), workspace(tmp_path, "other")
    first = earlier_session(host, ws)
    hidden = earlier_session(host, other)
    now = host.open_session(ws)
    listed = call(now, "list_sessions")
    assert not listed.is_error, listed.text
    rows = [line for line in listed.text.splitlines() if line.startswith("| 1") or
            line.startswith("| 2")]
    assert now.id in rows[0] and "(this session)" in rows[0]
    assert first in rows[1] and "| 3 |" in rows[1]  # its three calls
    assert "The tokenizer splits on tabs" in rows[1]  # the preview: the first user message
    assert hidden not in listed.text and str(other) not in listed.text
    assert listed.meta["sessions"] == 2
    assert "| 1 |" in call(now, "list_sessions", limit=1).text
    assert call(now, "list_sessions", limit=0).error.kind == "invalid_arguments"


def test_read_session_shows_turns_messages_and_calls(boot: Any, tmp_path: Path) -> None:
    host = boot()
    ws = workspace(tmp_path, "ws")
    sid = earlier_session(host, ws)
    now = host.open_session(ws)
    text = call(now, "read_session", session=sid[:10]).text
    assert text.startswith(f"# Session {sid}")
    assert "## User (turn 1, message 1)\nThe tokenizer splits on tabs" in text
    assert "## Assistant (turn 1, message 3)" in text
    assert '- [2] read_file {"path": "parser.py"} → ok' in text
    assert "- [5] edit_file" in text and "→ not_found: FS_NOT_FOUND" in text
    assert "def parse(text)" not in text  # results only when asked
    assert "show_tool_results=true" in text
    full = call(now, "read_session", session=sid, show_tool_results=True).text
    assert "### Tool result: read_file (c1, message 2)\n1→def parse(text):" in full
    one = call(now, "read_session", session=sid, max_turns=1).text
    assert "(turns 1-1 of 1)" in one
    assert "system" not in full.lower()


def test_turns_follow_batches_when_no_message_was_recorded(boot: Any, tmp_path: Path) -> None:
    host = boot()
    ws = workspace(tmp_path, "ws")
    s = host.open_session(ws)
    for i in range(3):
        s.run(ToolCall(f"c{i}", "read_file", {"path": "parser.py"}))
    sid = s.id
    s.close()
    now = host.open_session(ws)
    text = call(now, "read_session", session=sid, max_turns=2).text
    assert "(turns 2-3 of 3)" in text and "- [1]" not in text and "- [3] read_file" in text
    assert "(turns 1-3 of 3)" in call(now, "read_session", session=sid, max_turns=0).text


def test_history_search_ranks_matches_with_snippets_and_kinds(boot: Any,
                                                             tmp_path: Path) -> None:
    host = boot()
    ws = workspace(tmp_path, "ws")
    sid = earlier_session(host, ws)
    now = host.open_session(ws)
    found = call(now, "history", operation="search", query="tokenizer tabs")
    assert not found.is_error, found.text
    assert found.meta["matches"] >= 1
    first = found.text.splitlines()[2]
    assert f"session={sid}" in first and "message_index=1" in first and "kind=user_text" in first
    assert "[tokenizer] splits on [tabs]" in found.text
    errors = call(now, "history", operation="search", query="missing", kind=["tool_error"])
    assert "kind=tool_error" in errors.text and "tool=edit_file" in errors.text
    outputs = call(now, "history", operation="search", query="parse")
    assert "kind=tool_output" not in outputs.text  # not searched unless asked
    outputs = call(now, "history", operation="search", query="parse", kind=["tool_output"])
    assert "kind=tool_output" in outputs.text
    only = call(now, "history", operation="search", query="parse", tool_name="read_file",
                kind=["tool_input", "tool_output"])
    assert "tool=edit_file" not in only.text and "tool=read_file" in only.text
    limited = call(now, "history", operation="search", query="parse", limit=1)
    assert limited.meta["matches"] == 1
    assert call(now, "history", operation="search", query="parse",
                limit=21).error.kind == "invalid_arguments"
    nothing = call(now, "history", operation="search", query="zebra")
    assert nothing.text == "No matches for 'zebra' in this workspace's sessions."


def test_history_around_shows_the_entries_before_and_after(boot: Any, tmp_path: Path) -> None:
    host = boot()
    ws = workspace(tmp_path, "ws")
    sid = earlier_session(host, ws)
    now = host.open_session(ws)
    around = call(now, "history", operation="around", session=sid, message_index=3, before=1,
                  after=1).text
    assert around.splitlines()[0] == f"Session {sid}, messages 2-4 (around 3):"
    assert "[3 assistant] <<" in around and "[2 tool] read_file" in around
    assert "[4 tool] edit_file" in around and "[5" not in around
    missing = call(now, "history", operation="around", session=sid)
    assert missing.error.kind == "invalid_arguments" and "/message_index" in missing.text
    assert call(now, "history", operation="search").error.kind == "invalid_arguments"
    too_far = call(now, "history", operation="around", session=sid, message_index=3, after=11)
    assert too_far.error.kind == "invalid_arguments"


def test_other_workspaces_sessions_are_refused_as_if_unknown(boot: Any,
                                                            tmp_path: Path) -> None:
    host = boot()
    ws, other = workspace(tmp_path, "ws"), workspace(tmp_path, "other")
    foreign = earlier_session(host, other)
    now = host.open_session(ws)
    unknown = call(now, "read_session", session="0" * 32)
    refused = call(now, "read_session", session=foreign)
    assert refused.error.kind == unknown.error.kind == "not_found"
    assert refused.text.replace(foreign, "X") == unknown.text.replace("0" * 32, "X")
    around = call(now, "history", operation="around", session=foreign, message_index=1)
    assert around.error.kind == "not_found" and "tokenizer" not in around.text
    searched = call(now, "history", operation="search", query="tokenizer")
    assert foreign not in searched.text and "No matches" in searched.text
    glob = call(now, "history", operation="search", query="tokenizer", scope="global")
    assert glob.error.kind == "blocked" and "allow_global_history" in glob.text


def test_global_history_when_the_host_allows_it(boot: Any, tmp_path: Path) -> None:
    host = boot({"sessions": {"allow_global_history": True}})
    ws, other = workspace(tmp_path, "ws"), workspace(tmp_path, "other")
    foreign = earlier_session(host, other)
    now = host.open_session(ws)
    glob = call(now, "history", operation="search", query="tokenizer", scope="global")
    assert f"session={foreign}" in glob.text and f"workspace={other.resolve()}" in glob.text
    project = call(now, "history", operation="search", query="tokenizer")
    assert foreign not in project.text  # project scope is still the default
    assert "The tokenizer" in call(now, "read_session", session=foreign).text
    assert foreign in call(now, "list_sessions").text


def test_another_principals_sessions_are_refused_as_if_unknown(boot: Any,
                                                              tmp_path: Path) -> None:
    """Every session records its principal; the tools answer only with the caller's, in
    its workspace and (global history allowed by the host) in every other one."""
    from callgate.store import StoreError, UnknownSession, local_principal

    host = boot({"sessions": {"allow_global_history": True}})
    ws, other = workspace(tmp_path, "ws"), workspace(tmp_path, "other")
    theirs = earlier_session(host, ws, principal="token-0123456789ab", name="theirs")
    elsewhere = earlier_session(host, other, principal="token-0123456789ab")
    mine = earlier_session(host, ws)
    now = host.open_session(ws)
    assert now.principal == local_principal() and local_principal().startswith("user:")
    listed = call(now, "list_sessions").text
    assert mine in listed and theirs not in listed and elsewhere not in listed
    unknown = call(now, "read_session", session="0" * 32)
    for sid in (theirs, theirs[:10], "theirs", elsewhere):
        refused = call(now, "read_session", session=sid)
        assert refused.error.kind == "not_found" and "tokenizer" not in refused.text
        assert refused.text.replace(sid, "X") == unknown.text.replace("0" * 32, "X")
    for scope in ("project", "global"):
        found = call(now, "history", operation="search", query="tokenizer", scope=scope).text
        assert mine in found and theirs not in found and elsewhere not in found
    around = call(now, "history", operation="around", session=theirs, message_index=1)
    assert around.error.kind == "not_found"
    # the token's own next session sees its two and not the user's
    token = host.open_session(ws, principal="token-0123456789ab")
    found = call(token, "history", operation="search", query="tokenizer", scope="global").text
    assert theirs in found and elsewhere in found and mine not in found
    # resuming or joining another principal's session is refused; a child keeps its parent's
    with pytest.raises(UnknownSession):
        host.open_session(ws, resume=theirs)
    with pytest.raises(StoreError, match="another principal"):
        host.open_session(ws, name="theirs")
    assert host.open_session(ws, principal="token-0123456789ab", resume=theirs).id == theirs
    assert token.session.open_child().principal == "token-0123456789ab"
    with pytest.raises(ValueError, match="principal"):
        host.open_session(ws, principal="has blanks")


def test_the_tools_are_hidden_and_reached_through_use_capability(boot: Any,
                                                                tmp_path: Path) -> None:
    host = boot(surface="lean", extra=(callgate_capability,))
    ws = workspace(tmp_path, "ws")
    sid = earlier_session(host, ws)
    now = host.open_session(ws)
    names = {t["name"] for t in providers.surface(now)}
    assert not names & {"list_sessions", "read_session", "history"}
    result = now.run(ToolCall("u", "use_capability", {
        "action": "call", "capability_id": "tool:history",
        "arguments": {"operation": "search", "query": "tokenizer"}}))
    assert not result.is_error, result.text
    assert f"session={sid}" in result.text
    assert all(host.registry.get(n).read_only for n in ("list_sessions", "read_session",
                                                        "history"))


def test_the_current_session_reads_itself_up_to_its_last_batch(boot: Any,
                                                              tmp_path: Path) -> None:
    host = boot()
    ws = workspace(tmp_path, "ws")
    now = host.open_session(ws)
    now.record_message("user", "remember the walrus")
    now.run(ToolCall("c1", "read_file", {"path": "parser.py"}))
    found = call(now, "history", operation="search", query="walrus")
    assert f"session={now.id} (this session)" in found.text
    text = call(now, "read_session", session=now.id).text
    assert "remember the walrus" in text and "- [2] read_file" in text
    assert json.dumps("history") not in text  # the call in flight is not part of it
