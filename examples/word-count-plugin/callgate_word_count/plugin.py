"""The plugin's hook implementations: register the tool at boot."""

from __future__ import annotations

from callgate import Registry, hookimpl

from .tools import word_count


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    registry.add(word_count.SPEC)
