"""The files plugin's hook implementations: the tools, the keys it adds to the core's
``[files]`` table and the outside-change watcher, started and stopped with each session."""

from __future__ import annotations

from typing import Any

import attrs
from callgate import hookimpl

from ._native import FACES
from ._watch import FILE_WATCH, FileWatch
from .config import CONFIG_KEYS
from .tools.specs import (
    DELETE_RANGE_SPEC,
    EDIT_SPEC,
    INSERT_SPEC,
    MOVE_SPEC,
    MULTI_SPEC,
    NOTEBOOK_SPEC,
    PATCH_SPEC,
    READ_SPEC,
    WRITE_SPEC,
)

# declared data: each tool's module is imported by its first call (callgate.deferred);
# the native faces ride on read_file: the file family's provider-native shapes
TOOLS = (attrs.evolve(READ_SPEC, native=FACES), WRITE_SPEC, EDIT_SPEC, MULTI_SPEC,
         DELETE_RANGE_SPEC, MOVE_SPEC, NOTEBOOK_SPEC, PATCH_SPEC, INSERT_SPEC)


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
