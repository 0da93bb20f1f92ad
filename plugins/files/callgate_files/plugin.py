"""The files plugin's hook implementations: the tools, the ``[files]`` table and the
outside-change watcher, started and stopped with each session."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._encoding import fallback_problem
from ._watch import FileWatch
from .config import CONFIG_SCHEMA
from .tools import delete_range, edit_file, move_file, notebook_edit, read_file, write_file

TOOLS = (read_file.SPEC, write_file.SPEC, edit_file.EDIT_SPEC, edit_file.MULTI_SPEC,
         delete_range.SPEC, move_file.SPEC, notebook_edit.SPEC)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    config = registry.add_config("files", CONFIG_SCHEMA)
    for name in config["fallback_encodings"]:
        problem = fallback_problem(name)
        if problem:  # fails boot naming the file, the key and the entry's line
            raise registry.config_error(problem, ("files", "fallback_encodings"), name)
    registry.add_session_extension("file_watch", FileWatch)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_session_start(session: Any) -> None:
    watch = bool(session.host.plugin_config_value("files", "watch", True))
    session.file_watch.start(watch)


@hookimpl
def callgate_session_end(session: Any) -> None:
    session.file_watch.stop()
