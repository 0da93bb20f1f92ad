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

from ._model import ImageBlock, TextBlock, ToolCall, ToolResult
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
    return Entry(line, ToolCall(call_id, item["name"], item.get("arguments")), raw=item)


def content_json(result: ToolResult) -> str | list[dict[str, Any]]:
    """The text the model sees; with images, a list of text and image-summary blocks."""
    if not any(isinstance(b, ImageBlock) for b in result.content):
        return result.text
    blocks: list[dict[str, Any]] = []
    for b in result.content:
        if isinstance(b, TextBlock):
            blocks.append({"type": "text", "text": b.text})
        else:
            blocks.append({"type": "image", "media_type": b.media_type, "bytes": len(b.data)})
    return blocks


def result_json(result: ToolResult, line: int | None = None) -> dict[str, Any]:
    meta = dict(result.meta)
    if line is not None:
        meta.setdefault("line", line)
    error = None
    if result.error is not None:
        error = {"kind": result.error.kind, "signature": result.error.signature,
                 "message": result.error.message}
    return {"id": result.call_id, "name": result.name, "is_error": result.is_error,
            "content": content_json(result), "error": error, "meta": _jsonable(meta)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


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
