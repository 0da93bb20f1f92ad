"""(Un)structuring results and transcript calls with cattrs.

The replay CLI, ``callgate serve`` and integrators that log sessions all need
the same JSON shapes; one converter defines them:

- a `ToolResult` becomes ``{"id", "name", "is_error", "content", "error", "meta"}``
  where ``content`` is the text the model sees, or (with images) a list of text
  blocks and ``{"type": "image", "media_type", "bytes"}`` summaries;
- a transcript call ``{"id", "name", "arguments"}`` becomes a `ToolCall`
  (``arguments`` is kept exactly as sent: an object or a JSON string).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from callgate import ToolCall, ToolResult
from callgate.results import ErrorInfo, ImageBlock, TextBlock

if TYPE_CHECKING:
    import cattrs


def _block(block: TextBlock | ImageBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    return {"type": "image", "media_type": block.media_type, "bytes": len(block.data)}


def _content(result: ToolResult) -> str | list[dict[str, Any]]:
    if not result.images:
        return result.text
    return [_block(b) for b in result.content]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _unstructure_result(result: ToolResult) -> dict[str, Any]:
    return {
        "id": result.call_id,
        "name": result.name,
        "is_error": result.is_error,
        "content": _content(result),
        "error": _converter().unstructure(result.error) if result.error else None,
        "meta": _jsonable(result.meta),
    }


@functools.cache
def _converter() -> cattrs.Converter:
    """The one converter, built on first use: importing cattrs costs ~10 ms of every
    cold start, and most processes (``callgate tools``) never (un)structure anything."""
    import cattrs

    converter = cattrs.Converter()
    converter.register_unstructure_hook(ToolResult, _unstructure_result)
    converter.register_unstructure_hook(
        ErrorInfo, lambda e: {"kind": e.kind, "signature": e.signature, "message": e.message}
    )
    converter.register_structure_hook(
        ToolCall, lambda d, _: ToolCall(d["id"], d["name"], d.get("arguments"))
    )
    return converter


def __getattr__(name: str) -> Any:
    if name == "converter":  # the module attribute it used to be
        return _converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def result_to_json(result: ToolResult) -> dict[str, Any]:
    """The replay/log shape of a result."""
    return _converter().unstructure(result)


def call_from_json(data: dict[str, Any]) -> ToolCall:
    """A `ToolCall` from a transcript call object (``id`` and string ``name`` required)."""
    return _converter().structure(data, ToolCall)
