"""The workflow plugin's hook implementations: hook specs, session extensions, tools."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import hookspecs
from .tools import compress, present, todo_write


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_session_extension(todo_write.TODOS, todo_write.TodoList)
    registry.add_session_extension(present.PRESENTED_FILES, present.PresentedFiles)
    for spec in (todo_write.TOOL, present.TOOL, compress.TOOL):
        registry.add(spec)
