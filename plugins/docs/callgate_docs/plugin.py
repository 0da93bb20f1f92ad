"""The docs plugin's hook implementation: its config table and the ``docs`` tool."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .config import CONFIG_SCHEMA
from .tools.specs import TOOLS


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("docs", CONFIG_SCHEMA)
    for spec in TOOLS:
        registry.add(spec)
