"""Test doubles for the goal tests: a minimal ``use_capability`` proxy.

The real capability plugin is another package; this double only forwards
``call`` to a registered tool, so lean mode holds (hidden tools stay hidden)
and the retired-protocol hints can be checked on proxied calls.
"""

from __future__ import annotations

from typing import Any

from callgate import Target, ToolSpec, hookimpl


def _resolve(ctx: Any, args: dict[str, Any]) -> Target | None:
    if args.get("action") != "call":
        return None
    name = str(args.get("capability_id", "")).removeprefix("tool:")
    spec = ctx.session.available_tools()[name]
    return Target(tool=spec, arguments=args.get("arguments"), label=args["capability_id"])


class CapabilityDouble:
    """Registers a surface ``use_capability`` that forwards ``call`` actions."""

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="use_capability", description="test double of the capability proxy",
            schema={"type": "object", "required": ["action"],
                    "properties": {"action": {"type": "string"},
                                   "capability_id": {"type": "string"}, "arguments": {}}},
            visibility="surface", execute=lambda ctx, args: "nothing to do",
            resolve_target=_resolve, read_only=lambda args: False))


def via_capability(name: str, arguments: Any) -> dict[str, Any]:
    """A ``use_capability`` call of ``tool:<name>``, as a call dict for ``session.run``."""
    return {"name": "use_capability",
            "arguments": {"action": "call", "capability_id": f"tool:{name}",
                          "arguments": arguments}}
