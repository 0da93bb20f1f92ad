"""The workflow plugin's hook implementations: hook specs, session extensions, tools."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import _compress, _present, _todos, hookspecs


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_session_extension(_todos.TODOS, _todos.TodoList)
    registry.add_session_extension(_present.PRESENTED_FILES, _present.PresentedFiles)
    for spec in (_todos.TOOL, _present.TOOL, _compress.TOOL):
        registry.add(spec)
