"""``structuredContent``: a result's data, never more than the text the model may read
(issue 34, items 2 and 6).

A result's data is ``result.meta["structured_content"]``: what a proxied MCP server sent
(the capability plugin keeps it) or what one of callgate's own tools with an
``output_schema`` made. The host may change the text on its way to the model (truncate it
to ``[results] max_chars``, append notices, a plugin's ``callgate_shape_result``), and the
data must not undo that:

- the data goes out as it came when the host left the text as the tool made it (for a
  proxied answer: the text its blocks rendered to, notices appended after it aside), and
  its JSON fits in ``max_chars`` characters;
- when the host truncated the text, or the JSON alone is larger than that, the data is
  *clipped* to ``max_chars``: long strings are cut in the middle around the result's own
  truncation marker (which names the ``result_ref`` to page the rest), long arrays keep
  their first items; ``_meta["callgate/structuredContent"]`` says it was clipped and carries
  the marker. Keys are never removed, so data valid against the tool's schema stays valid
  unless the schema bounds a length;
- when the host changed a proxied answer's text otherwise (a plugin rewrote it), the data is
  *dropped* and ``_meta`` says so: the server's data would show what the plugin removed.

A tool that declares an ``outputSchema`` must answer every success with data: a result
without any (a ``use_capability`` call whose target has none) gets ``{}``, which the schemas
of such tools accept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from callgate import ToolResult

META_KEY = "callgate/structuredContent"
#: the truncation marker the host put in the text (host.md §7)
_MARKER = re.compile(r"…\[truncated [^\n]*?\]…")
#: how many passes the clip makes before it gives up (and drops the data)
_PASSES = 64
#: a string shorter than this is not worth cutting
_MIN_CUT = 16


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _unchanged(result: ToolResult, meta: Mapping[str, Any]) -> bool:
    """Whether the text is still the tool's own (notices appended after it aside)."""
    sha = meta.get("mcp_text_sha256")
    if not isinstance(sha, str):
        return not meta.get("truncated")  # callgate's own tools: only truncation changes it
    text = result.text
    if hashlib.sha256(text.encode()).hexdigest() == sha:
        return True
    chars = meta.get("mcp_text_chars")
    if not isinstance(chars, int) or len(text) < chars or not text[chars:].startswith("\n\n"):
        return False
    return hashlib.sha256(text[:chars].encode()).hexdigest() == sha


def structured_content(result: ToolResult, max_chars: int, output_schema: Any = None
                       ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The ``structuredContent`` to send for ``result`` and what ``_meta`` says about it."""
    meta = result.meta or {}
    data = meta.get("structured_content")
    if not isinstance(data, dict):
        return _fallback(result, output_schema), {}
    truncated = bool(meta.get("truncated"))
    if not _unchanged(result, meta) and not truncated:
        note = ("dropped: the host changed the text of this result, and the data would show "
                "what it changed; the text is the result")
        return _fallback(result, output_schema), {META_KEY: note}
    if not truncated and len(_dumps(data)) <= max_chars:
        return data, {}
    found = _MARKER.search(result.text)
    marker = found.group(0) if found else None
    clipped = clip(data, max_chars, marker)
    if clipped is None:
        note = f"dropped: larger than [results] max_chars ({max_chars:,} characters)"
        if marker:
            note += f"; {marker}"
        return _fallback(result, output_schema), {META_KEY: note}
    note = f"clipped to [results] max_chars ({max_chars:,} characters)"
    if marker:
        note += f"; {marker}"
    return clipped, {META_KEY: note}


def _fallback(result: ToolResult, output_schema: Any) -> dict[str, Any] | None:
    """``{}`` for a success of a tool that declares an output schema without required keys
    (a client checks that such a tool's result has data), else nothing."""
    if result.is_error or not isinstance(output_schema, Mapping):
        return None
    return None if output_schema.get("required") else {}


def clip(value: dict[str, Any], budget: int, marker: str | None = None
         ) -> dict[str, Any] | None:
    """``value`` with its JSON within ``budget`` characters: the largest strings cut in the
    middle around ``marker`` (or a count of what is not shown), the largest arrays cut to
    their first items, until it fits; ``None`` if it cannot be made to fit."""
    value = json.loads(_dumps(value))  # a private copy, JSON types only
    for _ in range(_PASSES):
        excess = len(_dumps(value)) - budget
        if excess <= 0:
            return value
        found = _largest(value)
        if found is None:
            return None
        _size, parent, key = found
        node = parent[key]
        if isinstance(node, str):
            parent[key] = _cut_string(node, excess, marker)
        else:
            parent[key] = _cut_array(node, excess)
    return value if len(_dumps(value)) <= budget else None


def _largest(root: Any) -> tuple[int, Any, Any] | None:
    """The largest string or array below ``root`` that can still shrink, by JSON size, as
    ``(size, its container, its key or index)``."""
    best: tuple[int, Any, Any] | None = None
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        node, _ = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) \
            if isinstance(node, list) else ()
        for key, child in items:
            if isinstance(child, str) and len(child) > _MIN_CUT + 64:
                size = len(_dumps(child))
            elif isinstance(child, list) and child:
                size = len(_dumps(child))
                stack.append((child, None))
            elif isinstance(child, dict):
                stack.append((child, None))
                continue
            else:
                continue
            if best is None or size > best[0]:
                best = (size, node, key)
    return best


def _cut_string(text: str, excess: int, marker: str | None) -> str:
    """``text`` shorter by at least ``excess`` characters: its head and tail around a note
    of what is not shown (with ``marker`` when there is room for it)."""
    def note(hidden: int, label: str) -> str:
        return f" …[{hidden:,} characters not shown{'; ' + label if label else ''}]… "

    for label in ([marker] if marker else []) + [""]:
        hidden = excess + len(note(len(text), label))
        if hidden > len(text):
            continue
        keep = len(text) - hidden
        head = keep // 2
        return text[:head] + note(hidden, label) + text[len(text) - (keep - head):]
    return text[: max(0, len(text) - excess)]


def _cut_array(items: list[Any], excess: int) -> list[Any]:
    """``items`` without as many of its last items as it takes to shed ``excess`` characters
    (at least one)."""
    shed = 0
    keep = len(items)
    while keep > 0 and shed < excess:
        keep -= 1
        shed += len(_dumps(items[keep])) + 1
    return items[:keep]


__all__ = ["META_KEY", "clip", "structured_content"]
