"""``use_capability``: one fixed tool in front of hidden tools, MCP servers and stored results.

Its name, description and schema never depend on configuration or on what
MCP servers offer, so the provider-visible surface stays byte-identical for
the whole session (capability.md §1-§4). ``list``/``search``/``inspect``/
``decline`` run here; ``call`` resolves to a target the pipeline runs
(`_targets`).
"""

from __future__ import annotations

import json
from typing import Any

from callgate import ProxyRoute, SessionKey, ToolContext, ToolResult, ToolSpec, Violation

from .._ids import FORMS, TOOL_RESULT_ID, parse
from .._inventory import PROXY_NAME, Inventory
from .._misplaced import misplaced_advice
from .._targets import resolve

#: ``session.extension(CAPABILITY_DECLINES)``: ``(capability id, why)`` of every capability
#: the policy declined in this session
CAPABILITY_DECLINES: SessionKey[list[tuple[str, str]]] = SessionKey("capability_declines")

ACTIONS = ("list", "search", "inspect", "call", "decline")
READ_ONLY_ACTIONS = frozenset({"list", "search", "inspect", "decline"})

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS),
                   "description": "What to do: list, search, inspect, call or decline."},
        "capability_id": {"type": "string", "minLength": 1,
                          "description": "The capability to inspect, call or decline."},
        "query": {"type": "string", "minLength": 1, "maxLength": 200,
                  "description": "Words to search for (search)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 8, "default": 5,
                  "description": "Most search results to return."},
        "arguments": {"type": ["object", "null"], "default": {},
                      "description": "The input of the capability being called (call); "
                                     "null is {}, as for a direct call."},
        "reason": {"type": "string", "minLength": 1, "maxLength": 500,
                   "description": "Why the capability is not needed (decline)."},
    },
    "required": ["action"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Reach capabilities that are not on the tool list: hidden tools, MCP servers and their "
    "tools, and stored tool results. Prefer action=search with a query, then inspect one "
    "exact capability_id, then call it with its input inside arguments; list gives a compact "
    "inventory. list, search and inspect never start anything. decline records, with a "
    "reason, that a capability is not needed. Capability ids: tool:<name>, "
    "mcp-server:<server> (call it to connect and list its tools), mcp-tool:<server>/<tool>, "
    "session:tool_result (page through a long result)."
)

#: ``structuredContent`` (MCP): what ``list``, ``search`` and ``inspect`` return as text, as
#: data; for a ``call``, the target's own data (an MCP tool's ``structuredContent``, a hidden
#: tool's) or ``{}``. Deliberately loose (nothing required, no types): a target's data passes
#: through as it is and must never fail the client's check.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "servers": {"description": "list: the configured MCP servers (id, status, ...)."},
        "tools": {"description": "list: the hidden tools (id, read_only)."},
        "session": {"description": "list: the session capabilities."},
        "omitted": {"description": "list: how many were left out (disabled, denied)."},
        "results": {"description": "search: the best matches (id, kind, description, ...)."},
    },
}

_NEEDS = {"inspect": ("capability_id",), "call": ("capability_id",),
          "decline": ("capability_id", "reason"), "search": ("query",)}


def read_only(args: Any) -> bool:
    """``list``/``search``/``inspect``/``decline`` are read-only; a ``call`` is judged by its
    target once resolved (until then: not read-only)."""
    return isinstance(args, dict) and args.get("action") in READ_ONLY_ACTIONS


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    """What the schema cannot say: per-action requirements and the id forms."""
    action = args.get("action")
    out: list[Violation] = []
    missing = [f for f in _NEEDS.get(action, ()) if f not in args]
    if missing:
        out.append(Violation("/", "required", "required properties: " + ", ".join(missing)))
    cap = args.get("capability_id")
    if cap is not None and action in ("inspect", "call", "decline") and parse(cap) is None:
        out.append(Violation("/capability_id", "pattern", f"one of the forms {FORMS}"))
    for field in ("query", "reason"):
        value = args.get(field)
        if isinstance(value, str) and value and not value.strip() and \
                field in _NEEDS.get(action, ()):
            out.append(Violation(f"/{field}", "minLength", "a text that is not blank"))
    return out


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    action = args["action"]
    inventory = Inventory(ctx.session)
    if action == "list":
        return _with_data(inventory.list())
    if action == "search":
        return _with_data(inventory.search(args["query"], int(args.get("limit", 5))))
    cap = parse(args["capability_id"])
    assert cap is not None
    if action == "decline":
        reason = args["reason"].strip()
        ctx.session.extension(CAPABILITY_DECLINES).append((cap.text, reason))
        return ToolResult.ok(f"declined capability {cap.text}: {reason}")
    if action == "inspect":
        if cap.kind == "tool":
            return inventory.inspect_tool(cap)
        if cap.kind == "mcp-server":
            return inventory.inspect_server(cap)
        if cap.kind == "mcp-tool":
            return inventory.inspect_mcp_tool(cap)
        if cap.text == "session:tool_result":
            return inventory.inspect_tool_result()
        from .._inventory import unavailable

        return unavailable(cap.text, f'session capability "{cap.name}" does not exist; '
                           "did you mean session:tool_result?")
    # "call" never gets here: resolve_target always answers it.
    return ToolResult.failure("tool_error", f"use_capability failed: action {action} was not "
                              "resolved", "unresolved_call")


def _with_data(text: str) -> ToolResult:
    """A listing's JSON text, and the same as ``structuredContent``."""
    return ToolResult.ok(text, {"structured_content": json.loads(text)})


def result_page(call_id: str, result_ref: str, offset: int) -> str:
    """How to read the rest of a truncated result (the core's truncation marker says it)."""
    call = json.dumps({"action": "call", "capability_id": TOOL_RESULT_ID,
                       "arguments": {"tool_call_id": call_id, "result_ref": result_ref,
                                     "offset": offset}}, separators=(",", ":"))
    return f"the full result is kept; read the rest with {PROXY_NAME} {call}"


ROUTE = ProxyRoute(
    hidden_tool=f'{PROXY_NAME} with capability_id "tool:{{name}}"',
    arguments=f"inside {PROXY_NAME}.arguments",
    result_page=result_page,
)

SPEC = ToolSpec(
    runs_at="host",
    name=PROXY_NAME,
    description=DESCRIPTION,
    schema=SCHEMA,
    execute=execute,
    read_only=read_only,
    # Advertised as the proxy is: its lookups change nothing and each target is gated per
    # call under its own name (a destructive MCP tool still asks), so clients that
    # auto-approve non-destructive tools do not prompt for every list/search/inspect.
    destructive=False,
    open_world=True,
    output_schema=OUTPUT_SCHEMA,
    visibility="surface",
    surface_order=90,
    validate=validate,
    resolve_target=resolve,
    misplaced=misplaced_advice(frozenset(SCHEMA["properties"])),
    route=ROUTE,
    examples=(
        {"action": "search", "query": "rename a symbol across files"},
        {"action": "call", "capability_id": "tool:grep",
         "arguments": {"pattern": "TODO", "path": "src"}},
    ),
)
