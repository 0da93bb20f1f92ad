"""Replaying a JSON-Lines transcript through one session (host.md §9).

A line is one call ``{"id", "name", "arguments"}`` or a batch ``{"batch": [...]}``,
optionally with ``"origin"``. A bad line (or a call without a string ``name``)
becomes an ``invalid_transcript`` result in its place and replay goes on; such
results never reach the session. Nothing a line holds stops the replay: a line
nested too deeply to read, or bytes that are not UTF-8, is a bad line like any
other, and results holding text that is not Unicode are printed with escapes.

A line ``{"mode": "default"}`` or ``{"mode": "plan"}`` is the human's side of
plan mode: it switches the session's mode between calls and gives no result of
its own. ``{"mode": "default"}`` after ``--mode plan`` is the plan's approval;
the model is told with the next results (a notice), as an agent's user
interface would tell it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import attrs

from ._model import ToolCall, ToolResult
from ._serial import call_from_json, result_to_json
from ._session import MODES, Session
from ._validation import lone_surrogate

MODE_NOTICES = {
    "default": "[plan approved] The user approved the plan and ended plan mode: calls that "
               "change files or run commands are allowed again (permission rules still apply).",
    "plan": "[plan mode] The user switched the session to plan mode: until the plan is "
            "approved, only read-only calls run; present the plan instead of making changes.",
}


@attrs.define
class Entry:
    """One call position of a transcript line: a call to run, or a bad-line result."""

    line: int
    call: ToolCall | None = None
    invalid: ToolResult | None = None
    raw: Any = None


def _invalid(line: int, shape: str, message: str, call_id: Any = None) -> ToolResult:
    result = ToolResult.failure("invalid_transcript", message, f"invalid_transcript:{shape}",
                                {"line": line})
    result.call_id = call_id if isinstance(call_id, str) else None
    return result


@attrs.frozen
class Line:
    """One parsed transcript line: its turn origin, call positions and mode switch."""

    origin: str
    entries: list[Entry]
    mode: str | None = None


def parse_line(text: str, line: int) -> Line:
    """The turn origin, the entries and the mode switch of one transcript line."""
    if lone_surrogate(text):  # raw text holds one only where reading escaped a non-UTF-8 byte
        return Line("human", [Entry(line, invalid=_invalid(
            line, "json", f"line {line} is not UTF-8 text"))])
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Line("human", [Entry(line, invalid=_invalid(
            line, "json", f"line {line} is not valid JSON ({exc.msg} at column {exc.colno})"))])
    except RecursionError:
        return Line("human", [Entry(line, invalid=_invalid(
            line, "json", f"line {line} nests arrays or objects deeper than the JSON reader "
            "allows"))])
    if not isinstance(value, dict):
        return Line("human", [Entry(line, invalid=_invalid(
            line, "shape", f"line {line} is not a JSON object (a call or a batch)"))])
    if "mode" in value and "name" not in value and "batch" not in value:
        return _mode_line(value, line)
    origin, entries = _call_line(value, line)
    return Line(origin, entries)


def _mode_line(value: dict[str, Any], line: int) -> Line:
    mode = value["mode"]
    if set(value) != {"mode"} or mode not in MODES:
        return Line("human", [Entry(line, invalid=_invalid(
            line, "shape", f'line {line}: a mode line is {{"mode": "default"}} or '
            '{"mode": "plan"} and holds nothing else'))])
    return Line("human", [], mode)


def _call_line(value: dict[str, Any], line: int) -> tuple[str, list[Entry]]:
    origin = value.get("origin", "human")
    if origin not in ("human", "automatic"):
        return "human", [Entry(line, invalid=_invalid(
            line, "shape", f'line {line}: origin must be "human" or "automatic"'))]
    if "batch" in value:
        items = value["batch"]
        if not isinstance(items, list):
            return origin, [Entry(line, invalid=_invalid(
                line, "shape", f"line {line}: batch must be a list of calls"))]
        return origin, [_entry(item, line, f"L{line}.{i + 1}") for i, item in enumerate(items)]
    return origin, [_entry(value, line, f"L{line}")]


def _entry(item: Any, line: int, default_id: str) -> Entry:
    if not isinstance(item, dict):
        return Entry(line, invalid=_invalid(line, "shape", f"line {line}: a call must be a "
                                            "JSON object with a string name"), raw=item)
    call_id = item.get("id", default_id)
    if not isinstance(item.get("name"), str):
        return Entry(line, invalid=_invalid(line, "shape", f"line {line}: a call needs a "
                                            'string "name"', call_id), raw=item)
    if not isinstance(call_id, str):
        call_id = json.dumps(call_id)
    return Entry(line, call_from_json({**item, "id": call_id}), raw=item)


def result_json(result: ToolResult, line: int | None = None) -> dict[str, Any]:
    """A result's replay line (see `_serial`); ``meta.line`` names its transcript line."""
    out = result_to_json(result)
    if line is not None:
        out["meta"].setdefault("line", line)
    return out


def switch_mode(session: Session, mode: str) -> None:
    """The human's plan-mode switch: set ``mode`` and, when it changes, tell the model with
    the next results. Used by replay's mode lines and ``callgate serve``."""
    if session.mode == mode:
        return
    session.set_mode(mode)
    session.notices.put("callgate.mode", MODE_NOTICES[mode])


def json_line(value: Any, indent: int | None = None) -> str:
    """``value`` as one JSON text for a UTF-8 stream: as is where it can be encoded, with
    ``\\u`` escapes where a string holds a lone surrogate (still the same JSON value)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, indent=indent)
    return text


async def replay(session: Session, lines: Iterable[str], first: int = 1
                 ) -> AsyncIterator[tuple[Entry, dict[str, Any]]]:
    """Run every line; yields each call position with its JSON result, in order. ``first``
    is the number of the first line (a scripted child replays its transcript line by line)."""
    for number, text in enumerate(lines, first):
        if not text.strip():
            continue
        parsed = parse_line(text, number)
        if parsed.mode is not None:
            switch_mode(session, parsed.mode)
            continue
        entries = parsed.entries
        calls = [e.call for e in entries if e.call is not None]
        results: list[ToolResult] = []
        if calls:
            session.begin_turn(parsed.origin)
            results = await session.run_batch(calls)
        it = iter(results)
        for entry in entries:
            if entry.invalid is not None:
                yield entry, result_json(entry.invalid)
            else:
                yield entry, result_json(next(it), number)
