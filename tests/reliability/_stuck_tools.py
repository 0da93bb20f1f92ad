"""A third-party plugin whose tools block and never look at ``ctx.cancelled``:
``stuck_read`` reads the FIFO it is given (no writer: it blocks), ``stuck_wait`` waits on
an event nobody sets. A module plugin (``plugins=[_stuck_tools]``), so a remote
executor's worker boots it by name and the tools get stuck there."""

from __future__ import annotations

from typing import Any

import anyio
from callgate import ToolSpec, hookimpl

SCHEMA = {"type": "object", "properties": {"fifo": {"type": "string"}},
          "additionalProperties": False}


def _sync(ctx: Any, args: dict[str, Any]) -> str:
    with open(args["fifo"], "rb") as fh:  # blocks: no writer
        return fh.read().decode() or "eof"


async def _async(ctx: Any, args: dict[str, Any]) -> str:
    await anyio.Event().wait()  # never set
    return "never"


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add(ToolSpec(name="stuck_read", description="Reads a FIFO.", schema=SCHEMA,
                          execute=_sync, read_only=True, visibility="surface"))
    registry.add(ToolSpec(name="stuck_wait", description="Waits forever.", schema=SCHEMA,
                          execute=_async, read_only=True, visibility="surface"))
