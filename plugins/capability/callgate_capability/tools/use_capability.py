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

from callgate import ToolContext, ToolResult, Violation

from .._ids import FORMS, TOOL_RESULT_ID, parse
from .._inventory import Inventory
from .._misplaced import misplaced_advice
from .specs import CAPABILITY_DECLINES, PROXY_NAME, READ_ONLY_ACTIONS, SCHEMA

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


#: the spec's ``misplaced``: arguments the model put beside ``arguments`` instead of inside
misplaced = misplaced_advice(frozenset(SCHEMA["properties"]))
