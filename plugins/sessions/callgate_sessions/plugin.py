"""The sessions plugin's hook implementation: its three tools."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .tools.specs import TOOLS


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    for spec in TOOLS:
        registry.add(spec)
