"""How recorded sessions read to the model: a session list, a session turn by turn, search
hits, and the entries around one.

Turns: a recorded user message starts a turn; a session with no user messages (the
integrator recorded none, or ``[sessions] record = "calls"``) has one turn per batch.
Texts are cut (messages and results 2,000 characters, arguments 1,200) with a note of
how much was left out; system prompts are never recorded, so never shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from callgate import store

if TYPE_CHECKING:
    from callgate.store import CallRecord, Entry, SearchHit, SessionInfo

TEXT_MAX = 2000
ARGUMENTS_MAX = 1200
PREVIEW_MAX = 80
AROUND_MAX = 600


def when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) + "Z"


def cut(text: str | None, limit: int) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def one_line(text: str | None, limit: int) -> str:
    return cut(" ".join((text or "").split()), limit)


def arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))


# --- list_sessions ---------------------------------------------------------------------------


def session_list(infos: Sequence[SessionInfo], current: str, global_: bool) -> str:
    if not infos:
        return "No recorded sessions" + ("." if global_ else " in this workspace.")
    head = "| # | Session | Started | Calls | " + ("Workspace | " if global_ else "") + \
        "Preview |"
    lines = [f"Recorded sessions{'' if global_ else ' of this workspace'}, newest first:", "",
             head, "|" + "---|" * (head.count("|") - 1)]
    for i, info in enumerate(infos, 1):
        label = info.id + (" (this session)" if info.id == current else "")
        if info.name:
            label += f" [{info.name}]"
        preview = one_line(info.preview, PREVIEW_MAX).replace("|", "\\|")
        cells = [str(i), label, when(info.started), str(info.calls)]
        if global_:
            cells.append(info.workspace)
        cells.append(preview)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Read one with read_session(session=...); search them with "
              "history(operation=\"search\", query=...)."]
    return "\n".join(lines)


# --- read_session ----------------------------------------------------------------------------


def turns(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The entries split into turns (see the module docstring)."""
    by_message = any(isinstance(e, store.MessageRecord) and e.role == "user" for e in entries)
    out: list[list[Entry]] = []
    batch: int | None = None
    for entry in entries:
        starts = (isinstance(entry, store.MessageRecord) and entry.role == "user") if by_message \
            else (isinstance(entry, store.CallRecord) and entry.batch != batch)
        if starts or not out:
            out.append([])
        if isinstance(entry, store.CallRecord):
            batch = entry.batch
        out[-1].append(entry)
    return out


def outcome_line(call: CallRecord) -> str:
    if call.outcome == "ok":
        return "ok"
    if not call.is_error:
        return call.outcome
    return f"{call.outcome}: {one_line(call.seen, 200)}"


def session_text(info: SessionInfo, entries: Sequence[Entry], max_turns: int,
                 show_results: bool) -> str:
    all_turns = turns(entries)
    shown = all_turns if max_turns == 0 else all_turns[-max_turns:]
    first = len(all_turns) - len(shown) + 1
    lines = [f"# Session {info.id}" + (f" [{info.name}]" if info.name else ""),
             f"workspace {info.workspace}; started {when(info.started)}; ended "
             f"{when(info.ended)}; {info.status}; {info.calls} calls",
             f"(turns {first}-{len(all_turns)} of {len(all_turns)})" if shown else
             "(nothing recorded yet)"]
    for number, turn in enumerate(shown, first):
        batch: int | None = None
        results: list[CallRecord] = []
        for entry in turn:
            if isinstance(entry, store.MessageRecord):
                lines += ["", f"## {entry.role.capitalize()} (turn {number}, message "
                              f"{entry.seq})", cut(entry.text, TEXT_MAX)]
            elif isinstance(entry, store.NoticeRecord):
                lines += ["", f"### Notice (message {entry.seq})", cut(entry.text, TEXT_MAX)]
            else:
                if entry.batch != batch:
                    batch = entry.batch
                    lines += ["", f"### Tool calls (turn {number}, batch {batch})"]
                tool = f" → {entry.tool}" if entry.tool else ""
                lines.append(f"- [{entry.seq}] {entry.name}{tool} "
                             f"{cut(arguments_text(entry.arguments), ARGUMENTS_MAX)} → "
                             f"{outcome_line(entry)}")
                results.append(entry)
        if show_results:
            for call in results:
                lines += ["", f"### Tool result: {call.name} ({call.call_id}, message "
                              f"{call.seq})", cut(call.seen, TEXT_MAX)]
    if not show_results and any(isinstance(e, store.CallRecord) for e in entries):
        lines += ["", "(tool results hidden; show_tool_results=true shows them)"]
    return "\n".join(lines)


# --- history ---------------------------------------------------------------------------------


def hits_text(query: str, hits: Sequence[SearchHit], current: str, global_: bool) -> str:
    if not hits:
        where = "any workspace's sessions" if global_ else "this workspace's sessions"
        return f"No matches for {query!r} in {where}."
    lines = [f"{len(hits)} matches for {query!r}, best first:"]
    for i, hit in enumerate(hits, 1):
        session = hit.session + (" (this session)" if hit.session == current else "")
        tool = f" tool={hit.tool}" if hit.tool else ""
        place = f" workspace={hit.workspace}" if global_ else ""
        lines += ["", f"{i}. score={-hit.score:.3f} session={session} message_index={hit.seq} "
                      f"kind={hit.kind} role={hit.role}{tool}{place} at={when(hit.at)}",
                  f"   {cut(hit.snippet, 240)}"]
    lines += ["", "See the context of a match with history(operation=\"around\", session=..., "
              "message_index=...)."]
    return "\n".join(lines)


def around_text(info: SessionInfo, entries: Sequence[Entry], index: int) -> str:
    lines = [f"Session {info.id}, messages {entries[0].seq}-{entries[-1].seq} "
             f"(around {index}):" if entries else f"Session {info.id}: nothing around {index}."]
    for entry in entries:
        mark = " <<" if entry.seq == index else ""
        if isinstance(entry, store.MessageRecord):
            lines += ["", f"[{entry.seq} {entry.role}]{mark}", cut(entry.text, AROUND_MAX)]
        elif isinstance(entry, store.NoticeRecord):
            lines += ["", f"[{entry.seq} notice]{mark}", cut(entry.text, AROUND_MAX)]
        else:
            lines += ["", f"[{entry.seq} tool]{mark} {entry.name} "
                          f"{cut(arguments_text(entry.arguments), ARGUMENTS_MAX)} → "
                          f"{entry.outcome}", cut(entry.seen, AROUND_MAX)]
    return "\n".join(lines)
