"""``use_capability`` as declared data: its name, description, schemas and flags, with its code
named by `callgate.deferred` (issue 38). Registering the plugin imports this module and none
of the inventory, the MCP client or the targets; ``tools/use_capability.py`` is imported by
the first call (a module that fails to import fails the calls, naming the plugin)."""

from __future__ import annotations

from typing import Any

from callgate import ProxyRoute, SessionKey, ToolSpec, deferred

#: the proxy's name (the core's advice and the inventory use it)
PROXY_NAME = "use_capability"

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

_CODE = "callgate_capability.tools.use_capability"

ROUTE = ProxyRoute(
    hidden_tool=f'{PROXY_NAME} with capability_id "tool:{{name}}"',
    arguments=f"inside {PROXY_NAME}.arguments",
    result_page=deferred(f"{_CODE}:result_page"),
)

SPEC = ToolSpec(
    runs_at="host",
    name=PROXY_NAME,
    description=DESCRIPTION,
    schema=SCHEMA,
    execute=deferred(f"{_CODE}:execute"),
    read_only=deferred(f"{_CODE}:read_only"),
    # Advertised as the proxy is: its lookups change nothing and each target is gated per
    # call under its own name (a destructive MCP tool still asks), so clients that
    # auto-approve non-destructive tools do not prompt for every list/search/inspect.
    destructive=False,
    open_world=True,
    output_schema=OUTPUT_SCHEMA,
    visibility="surface",
    surface_order=90,
    validate=deferred(f"{_CODE}:validate"),
    resolve_target=deferred("callgate_capability._targets:resolve"),
    misplaced=deferred(f"{_CODE}:misplaced"),
    route=ROUTE,
    examples=(
        {"action": "search", "query": "rename a symbol across files"},
        {"action": "call", "capability_id": "tool:grep",
         "arguments": {"pattern": "TODO", "path": "src"}},
    ),
)
