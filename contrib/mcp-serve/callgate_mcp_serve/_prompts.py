"""MCP prompts: the session's slash commands and skills (issue 23, item 6).

``prompts/list`` and ``prompts/get`` are answered by the commands plugin's ``slash_command``
tool, run through the session's own pipeline like any other call: listing is
``slash_command`` with no command, getting is ``slash_command {command, arguments}``. So
the plugin stays the one place that knows where commands and skills live and how they
expand, mcp-serve imports nothing of it, and every gate applies (``[permissions]`` rules
for ``slash_command``, and for ``mcp:<server>:<prompt>`` the connect gate of that server,
which may ask the user through the same approval channel as a ``tools/call``).

The tool is hidden by default; then the call goes through the session's proxy
(``use_capability``'s documented ``{"action": "call", "capability_id": "tool:<name>",
"arguments": …}``), as the model would make it.

Arguments: a command's ``$ARGUMENTS``/``$1``..``$9`` are one argument string, so every
prompt has one optional argument, ``arguments``, described by the command's
``argument-hint``; the text is passed to the tool as typed.
"""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types
from callgate import ToolCall
from callgate.host import Session
from mcp.shared.exceptions import MCPError

#: the commands plugin's tool; without it, serve advertises no prompts
TOOL = "slash_command"
#: the one prompt argument: the text after the command
ARGUMENT = "arguments"
_PROXY_CALL = "call"

#: a listing line: ``/<name>[ <hint>] — <description>[  (<where>)]``
_LINE = re.compile(r"^/(?P<name>[^\s…]+)(?: (?P<hint>.*?))?? — (?P<rest>.*)$")
_WHERE = re.compile(r"^(?P<description>.*?)  \((?P<where>[^()]*(?:\([^()]*\)[^()]*)*)\)$")


def available(host_tools: list[str]) -> bool:
    """Whether the host has the commands plugin's tool (then serve advertises prompts)."""
    return TOOL in host_tools


def call(session: Session, call_id: str, arguments: dict[str, Any]) -> ToolCall:
    """``slash_command`` with ``arguments``, directly when it is on the surface, else
    through the session's proxy."""
    if session.is_visible(TOOL) or session.route is None:
        return ToolCall(call_id, TOOL, arguments)
    proxy = next(s.name for s in session.host.routes() if session.tool(s.name) is not None)
    return ToolCall(
        call_id,
        proxy,
        {"action": _PROXY_CALL, "capability_id": f"tool:{TOOL}", "arguments": arguments},
    )


def get_arguments(params: types.GetPromptRequestParams) -> dict[str, Any]:
    """The tool's arguments for a ``prompts/get``; an unknown argument is refused."""
    given = dict(params.arguments or {})
    extra = sorted(set(given) - {ARGUMENT})
    if extra:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"prompt {params.name} takes one argument, {ARGUMENT!r} "
            f"(the text after the command); unknown: {', '.join(extra)}",
        )
    return {"command": params.name, "arguments": str(given.get(ARGUMENT, "") or "")}


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


#: error kinds that mean the client asked for something that is not there
_CLIENT_KINDS = ("not_found", "invalid_arguments")


def _refused(result: types.CallToolResult, what: str) -> MCPError:
    """The tool's failure as a JSON-RPC error: an unknown prompt or bad arguments are
    ``-32602`` (invalid params, as the spec asks), anything else (a refusal by a rule or
    the user, a failing MCP server) ``-32603``; ``data`` carries callgate's kind and
    signature either way, and the message is the tool's feedback."""
    error = (result.meta or {}).get("callgate/error") or {}
    code = types.INVALID_PARAMS if error.get("kind") in _CLIENT_KINDS else types.INTERNAL_ERROR
    return MCPError(
        code=code,
        message=f"{what}: {_text(result)}",
        data={"callgate/error": error} if error else None,
    )


def parse_listing(text: str) -> list[types.Prompt]:
    """The prompts of ``slash_command``'s list: its command, skill and MCP prompt lines
    (the ``/mcp:<server>:…`` line of a server never asked is not a prompt)."""
    prompts: list[types.Prompt] = []
    seen: set[str] = set()
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None or match["name"] in seen:
            continue
        rest, where = match["rest"], None
        tail = _WHERE.match(rest)
        if tail is not None:
            rest, where = tail["description"], tail["where"]
        hint = (match["hint"] or "").strip()
        seen.add(match["name"])
        prompts.append(
            types.Prompt(
                name=match["name"],
                title=f"/{match['name']}" + (f" ({where.split(' · ')[0]})" if where else ""),
                description=rest.strip() or None,
                arguments=[
                    types.PromptArgument(
                        name=ARGUMENT,
                        required=False,
                        description=hint or "the text after the command ($ARGUMENTS, $1..$9)",
                    )
                ],
            )
        )
    return prompts


def listed(result: types.CallToolResult) -> types.ListPromptsResult:
    if result.is_error:
        raise _refused(result, "listing the slash commands failed")
    return types.ListPromptsResult(prompts=parse_listing(_text(result)))


def expanded(name: str, result: types.CallToolResult) -> types.GetPromptResult:
    """The expansion as one user message (without the tool's "follow these instructions"
    header, which is for a model reading a tool result)."""
    if result.is_error:
        raise _refused(result, f"prompt {name!r}")
    text = _text(result)
    head = f"Expanded /{name.lstrip('/').strip()} — follow these instructions now:\n\n"
    if text.startswith(head):
        text = text[len(head) :]
    return types.GetPromptResult(
        description=f"/{name}",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


__all__ = [
    "ARGUMENT",
    "TOOL",
    "available",
    "call",
    "expanded",
    "get_arguments",
    "listed",
    "parse_listing",
]
