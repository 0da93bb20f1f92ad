"""Answers for stdio lines the SDK cannot read, so no request goes unanswered.

The SDK's stdio transport hands a line it cannot parse or validate to the server as an
exception, and the server only logs it: a client that sent a request holding a lone
surrogate escape (``"\\ud800"``, not Unicode) or nested deeper than the parser's limit
(about 200 levels) waited for an answer that never came. `answer_for` turns such a
failure into the JSON-RPC error the client is owed:

- a line that is not JSON (``-32700``, parse error), saying why: a lone surrogate, too
  deep, or the parser's message;
- JSON that is a request but not a valid one (``-32600``, invalid request);

with the request's ``id`` when one can be found, even in a line the parser gave up on
(`request_id` reads the top-level ``"id"`` member by scanning, without parsing what is
nested), else ``null`` as JSON-RPC says. A message that is not a request (a response
the client sent) gets no answer: one must not answer a response.
"""

from __future__ import annotations

import json
import re

import mcp_types as types
from pydantic import ValidationError

#: the value of a top-level ``"id"`` member: an integer or a string
_ID_VALUE = re.compile(r'\s*:\s*(-?\d{1,18}|"(?:[^"\\\x00-\x1f]|\\.){0,512}")\s*[,}]')
_MAX_SCAN = 1 << 24  # characters of a line scanned for its id, at most


def request_id(raw: str) -> str | int | None:
    """The top-level ``"id"`` of a JSON-RPC message, found by scanning ``raw`` (which need
    not parse: the scan tracks strings and nesting only); ``None`` when there is none."""
    depth = 0
    i, n = 0, min(len(raw), _MAX_SCAN)
    while i < n:
        c = raw[i]
        if c == '"':
            end = _string_end(raw, i, n)
            if depth == 1 and raw[i:end] == '"id"':
                found = _ID_VALUE.match(raw, end)
                if found is not None:
                    return _id_value(found.group(1))
            i = end
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return None


def _string_end(raw: str, start: int, n: int) -> int:
    """The index just after the string that opens at ``start`` (``n`` if it never closes)."""
    i = start + 1
    while i < n:
        c = raw[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    return n


def _id_value(text: str) -> str | int | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")  # an id with a lone surrogate cannot be sent back
        except UnicodeEncodeError:
            return None
        return value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def answer_for(exc: Exception) -> types.JSONRPCError | None:
    """The error answering the line ``exc`` (the SDK's failure to read it) came from, or
    ``None`` when nothing must be answered (a malformed response, an unknown failure)."""
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    if not errors:
        return None
    first = errors[0]
    if first.get("type") == "json_invalid":
        raw = first.get("input")
        raw = raw if isinstance(raw, str) else ""
        return _error(request_id(raw), types.PARSE_ERROR, _why_unparseable(str(first["msg"])))
    message = next((e.get("input") for e in errors if isinstance(e.get("input"), dict)), None)
    if message is None:
        return _error(None, types.INVALID_REQUEST, "Invalid request: a JSON-RPC message is "
                      "an object with jsonrpc \"2.0\"; nothing was run")
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response: never answered
    rid = message.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        rid = None
    if "method" in message and "id" not in message:
        return None  # a notification: never answered
    return _error(rid, types.INVALID_REQUEST,
                  f"Invalid request: {first.get('msg', 'not a JSON-RPC request')} at "
                  f"{'/'.join(str(p) for p in first.get('loc', ()))}; nothing was run")


def _why_unparseable(parser_message: str) -> str:
    if "recursion limit" in parser_message:
        return ("Parse error: the request is nested too deeply (the limit is about 200 "
                "levels of objects and arrays); nothing was run")
    if "escape" in parser_message or "surrogate" in parser_message:
        return ("Parse error: the request holds a lone surrogate escape (such as \\ud800), "
                "which is not valid Unicode; send text as UTF-8 or paired escapes; nothing "
                "was run")
    return f"Parse error: {parser_message}; nothing was run"


def _error(rid: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=rid,
                              error=types.ErrorData(code=code, message=message))


__all__ = ["answer_for", "request_id"]
