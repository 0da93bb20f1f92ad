"""The ask plugin's hook implementations: its hook spec, its config table, the tool."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import hookspecs
from .config import CONFIG_SCHEMA
from .tools.specs import ASK


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_config("ask", CONFIG_SCHEMA)
    registry.add(ASK)
    # read-only (it changes nothing), but a strict read-only child has no user to ask
    registry.deny_in_read_only_children("ask")
