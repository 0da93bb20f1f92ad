"""Replaying a JSON-Lines transcript through one session (host.md §9).

A line is one call ``{"id", "name", "arguments"}`` or a batch ``{"batch": [...]}``,
optionally with ``"origin"``. A bad line (or a call without a string ``name``)
becomes an ``invalid_transcript`` result in its place and replay goes on; such
results never reach the session.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import attrs

from ._model import ToolCall, ToolResult
from ._serial import call_from_json, result_to_json
from ._session import Session


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


def parse_line(text: str, line: int) -> tuple[str, list[Entry]]:
    """The turn origin and the entries of one transcript line."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return "human", [Entry(line, invalid=_invalid(
            line, "json", f"line {line} is not valid JSON ({exc.msg} at column {exc.colno})"))]
    if not isinstance(value, dict):
        return "human", [Entry(line, invalid=_invalid(
            line, "shape", f"line {line} is not a JSON object (a call or a batch)"))]
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


async def replay(session: Session, lines: Iterable[str]
                 ) -> AsyncIterator[tuple[Entry, dict[str, Any]]]:
    """Run every line; yields each call position with its JSON result, in order."""
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        origin, entries = parse_line(text, number)
        calls = [e.call for e in entries if e.call is not None]
        results: list[ToolResult] = []
        if calls:
            session.begin_turn(origin)
            results = await session.run_batch(calls)
        it = iter(results)
        for entry in entries:
            if entry.invalid is not None:
                yield entry, result_json(entry.invalid)
            else:
                yield entry, result_json(next(it), number)
