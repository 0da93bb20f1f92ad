"""Where a refused ``use_capability`` call's parameters belong (``ToolSpec.misplaced``).

A model that means ``call`` often sends the target's parameters beside the
envelope: ``{"action": "call", "capability_id": "tool:read_file", "path":
"a.txt"}``. The envelope's schema refuses ``path``, and the usual advice ("these
parameters belong at the root of use_capability's input") would be wrong. When
the stray keys, moved into ``arguments``, satisfy the target's schema, the
feedback says so instead. Advice only: value-free, and nothing is moved for
the model.
"""

from __future__ import annotations

from typing import Any

from callgate import ToolContext, ToolSpec

from ._ids import TOOL_RESULT_ID, CapabilityId, parse
from ._inventory import PROXY_NAME, Inventory
from ._tool_result import SPEC as TOOL_RESULT_SPEC

MAX_NAMES = 8
MAX_NAME_CHARS = 60


def misplaced_advice(envelope_keys: frozenset[str]) -> Any:
    """The ``misplaced`` callable of a proxy whose own keys are ``envelope_keys``."""

    def misplaced(ctx: ToolContext, args: dict[str, Any]) -> str | None:
        if args.get("action") != "call" or not isinstance(args.get("capability_id"), str):
            return None
        cap = parse(args["capability_id"])
        stray = {k: v for k, v in args.items() if k not in envelope_keys}
        if cap is None or not stray:
            return None
        inner = args.get("arguments")
        candidate = {**inner, **stray} if isinstance(inner, dict) else stray
        spec = _target_spec(ctx, cap)
        if spec is None:
            return None
        compiled = ctx.host.compiled(spec)
        if compiled.validator is None or not compiled.validator.is_valid(candidate):
            return None
        names = sorted(stray)
        shown = ", ".join(n if len(n) <= MAX_NAME_CHARS else n[: MAX_NAME_CHARS - 1] + "…"
                          for n in names[:MAX_NAMES])
        if len(names) > MAX_NAMES:
            shown += f" and {len(names) - MAX_NAMES} more"
        one = len(names) == 1
        return (f"The parameter{'' if one else 's'} {shown} belong{'s' if one else ''} inside "
                f"use_capability.arguments (the input of {cap.text}), not at the root of "
                f"use_capability's input; move {'it' if one else 'them'} into \"arguments\" "
                "and call again.")

    return misplaced


def _target_spec(ctx: ToolContext, cap: CapabilityId) -> ToolSpec | None:
    """The target's spec as known now (never connects anything)."""
    if cap.kind == "tool":
        if cap.name == PROXY_NAME:
            return None
        return ctx.session.available_tools().get(cap.name)
    if cap.kind == "session":
        return TOOL_RESULT_SPEC if cap.text == TOOL_RESULT_ID else None
    if cap.kind == "mcp-tool" and cap.server:
        inventory = Inventory(ctx.session)
        if inventory.servers.config(cap.server) is None:
            return None
        _source, tools = inventory.servers.known(cap.server)
        info = next((t for t in tools if t.name == cap.name), None)
        if info is None or not isinstance(info.input_schema, dict):
            return None
        return ToolSpec(name=PROXY_NAME, description="", schema=info.input_schema)
    return None


__all__ = ["misplaced_advice"]
