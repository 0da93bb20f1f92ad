"""A third-party tool that returns the text it is given (``emit``), as a module plugin
(``plugins=[_emit_tool]``): a remote executor's worker boots it by name too."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, hookimpl


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add(ToolSpec(
        name="emit", description="return the text given", read_only=True,
        schema={"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]},
        execute=lambda ctx, args: args["text"]))
