"""The files plugin's hook implementations: the tools, the keys it adds to the core's
``[files]`` table and the outside-change watcher, started and stopped with each session."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._watch import FILE_WATCH, FileWatch
from .config import CONFIG_KEYS
from .tools import delete_range, edit_file, move_file, notebook_edit, read_file, write_file

TOOLS = (read_file.SPEC, write_file.SPEC, edit_file.EDIT_SPEC, edit_file.MULTI_SPEC,
         delete_range.SPEC, move_file.SPEC, notebook_edit.SPEC)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.extend_config("files", CONFIG_KEYS)
    registry.add_session_extension(FILE_WATCH, FileWatch)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_session_start(session: Any) -> None:
    watch = bool(session.host.plugin_config_value("files", "watch", True))
    session.extension(FILE_WATCH).start(watch)


@hookimpl
def callgate_session_end(session: Any) -> None:
    session.extension(FILE_WATCH).stop()
