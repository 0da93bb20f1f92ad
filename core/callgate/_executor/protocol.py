"""The executor protocol: JSON-RPC 2.0, one message per line, over a worker's stdio.

Versioned by `PROTOCOL` (an integer; a host and a worker speak only the same one). The
host speaks first::

    → {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol": 1,
       "callgate": "0.1.0",
       "boot": {"config", "environ", "entry_points", "modules", "surface", "os"}}}
    ← {"jsonrpc": "2.0", "id": 1, "result": {"protocol": 1, "callgate": "0.1.0",
       "os": "linux", "platform": "posix", "workspace": "/ws", "pid": 7,
       "capabilities": {"tools": [...], "cancel": true, "progress": true, "notices": true,
                        "preview": true, "file_changes": true,
                        "sessions": true}}}

``initialize`` may also carry ``detach`` ``{"grace_s"}`` (the worker outlives its host that
long: it relays to a daemon of its own, `_host.worker_daemon`) and ``attach`` (the daemon
identity a session recorded: relay to that daemon if it still listens); the answer then
names its ``daemon`` (``null`` for a worker that ends with its host) and the ``sessions``
it holds. Then, per session (the host's session id names the worker's):

- ``session/open`` ``{"session"}`` → ``{"workspace", "resumed"}`` (``resumed``: a daemon
  kept it while its host was away); ``session/close`` ``{"session"}``;
- ``tool/run`` ``{"session", "epoch", "tool", "call", "read_only", "destructive",
  "expected", "cancel_grace_s"}`` → ``{"result", "notices", "fact", "gate"}``: the worker
  runs the host gate and the tool (`pipeline.dispatch`) and answers the unshaped result, the notices
  its plugins queued (``[[source, text], ...]``), the execution fact of a writer
  (``{"paths", "held_s"}``) and the gate's finding;
- ``tool/preview`` ``{"session", "tool", "call"}`` → ``{"preview", "versions"}`` or
  ``{"refused"}``: the approval preview of an ``ask`` made where the files are (the
  preview the approver sees, the file versions an approval binds to; a tool's refusal as
  a result);
- ``tool/cancel`` ``{"session", "epoch"}`` (a notification): cancel that session's calls
  of that batch (the worker's tools see ``ctx.cancelled``; bash ends its process group);
- ``session/delivered`` ``{"session", "calls"}`` (a notification, host → worker): a batch's
  results were shaped and handed to the model (``callgate_results_delivered`` runs there);
- ``session/file_changes`` ``{"session", "changes": [[path, kind, origin], ...]}`` (a
  notification, worker → host): what the session's tools (and watcher) changed there,
  published into the host session's ``file_changes``; a tool's come before its answer;
- ``tool/progress`` ``{"request", "done", "total", "message"}`` (from the worker).

A failed request answers ``{"error": {"code", "message"}}`` (JSON-RPC's codes).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .._model.values import ErrorInfo, ImageBlock, TextBlock, ToolCall, ToolResult

#: the protocol version this callgate speaks
PROTOCOL = 1
#: JSON-RPC error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line. ``ensure_ascii`` keeps a lone surrogate (a file's undecodable
    byte in a result) as an escape that decodes back to itself."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("a message is a JSON object")
    return value


def request(ident: int, method: str, params: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})


def notification(method: str, params: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method, "params": params})


def response(ident: Any, result: Any) -> bytes:
    return encode({"jsonrpc": "2.0", "id": ident, "result": result})


def error(ident: Any, code: int, message: str) -> bytes:
    return encode({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def result_to_wire(result: ToolResult) -> dict[str, Any]:
    """A result, every block and fact kept (images as base64)."""
    content: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        else:
            data = base64.b64encode(block.data).decode("ascii")
            content.append({"type": "image", "media_type": block.media_type, "data": data})
    error = result.error
    return {
        "content": content,
        "is_error": result.is_error,
        "error": None
        if error is None
        else {"kind": error.kind, "signature": error.signature, "message": error.message},
        "meta": _jsonable(result.meta),
    }


def result_from_wire(value: dict[str, Any]) -> ToolResult:
    content: list[TextBlock | ImageBlock] = []
    for block in value.get("content") or ():
        if block.get("type") == "image":
            content.append(ImageBlock(block["media_type"], base64.b64decode(block["data"])))
        else:
            content.append(TextBlock(str(block.get("text", ""))))
    error = value.get("error")
    return ToolResult(
        content=content,
        is_error=bool(value.get("is_error")),
        error=None
        if error is None
        else ErrorInfo(error["kind"], error["signature"], error["message"]),
        meta=dict(value.get("meta") or {}),
    )


def value_to_wire(value: Any) -> Any:
    """A tool's preview (or any plain value): JSON kept as is, ``bytes`` and tuples tagged,
    an ``attrs`` instance (`callgate_toolkit.diffs.FilePreview`) as its class's name and
    fields, anything else as its text."""
    import attrs

    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [value_to_wire(v) for v in value]}
    if isinstance(value, list):
        return [value_to_wire(v) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[str(k), value_to_wire(v)] for k, v in value.items()]}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if attrs.has(type(value)):
        kind = type(value)
        fields = {f.name: value_to_wire(getattr(value, f.name)) for f in attrs.fields(kind)}
        return {"$attrs": f"{kind.__module__}:{kind.__qualname__}", "fields": fields}
    return str(value)


def value_from_wire(value: Any) -> Any:
    """`value_to_wire` undone. An ``attrs`` class is rebuilt only when this process has
    already imported its module (the host loaded the same plugins): a worker's message
    never makes the host import anything; otherwise its fields come back as a dict."""
    import sys

    import attrs

    if isinstance(value, list):
        return [value_from_wire(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$bytes" in value:
        return base64.b64decode(value["$bytes"])
    if "$tuple" in value:
        return tuple(value_from_wire(v) for v in value["$tuple"])
    if "$dict" in value:
        return {str(k): value_from_wire(v) for k, v in value["$dict"]}
    if "$attrs" in value:
        fields = {str(k): value_from_wire(v) for k, v in (value.get("fields") or {}).items()}
        module, _, qualname = str(value["$attrs"]).partition(":")
        found: Any = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if isinstance(found, type) and attrs.has(found):
            try:
                return found(**fields)
            except TypeError:
                pass
        return fields
    return {str(k): value_from_wire(v) for k, v in value.items()}


def call_to_wire(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.via is not None:
        out["via"] = call_to_wire(call.via)
    return out


def call_from_wire(value: dict[str, Any]) -> ToolCall:
    via = value.get("via")
    return ToolCall(
        value["id"],
        value["name"],
        value.get("arguments"),
        via=call_from_wire(via) if isinstance(via, dict) else None,
    )


__all__ = [
    "INTERNAL",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PROTOCOL",
    "call_from_wire",
    "call_to_wire",
    "decode",
    "encode",
    "error",
    "notification",
    "request",
    "response",
    "result_from_wire",
    "result_to_wire",
    "value_from_wire",
    "value_to_wire",
]
