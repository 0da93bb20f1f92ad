"""callgate's file tools: read_file and the observed edit family.

``read_file`` shows a bounded window of a text file and records the version it
saw; ``write_file``, ``edit_file``, ``multi_edit``, ``delete_range``,
``move_file`` and ``notebook_edit`` change a file only when this session has
seen its current version, write atomically in the file's own encoding and line
endings, and leave the file byte-for-byte as it was when they refuse
(spec: files.md). The observation ledger, confinement, writer leases and the
host gate live in the core (``callgate``); this package adds the tools, their
previews, the ``[files] watch`` key and the outside-change watcher (the core declares
and enforces the rest of ``[files]``).

Entry point (``pyproject.toml``)::

    [project.entry-points.callgate]
    files = "callgate_files"
"""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import delete_range, edit_file, move_file, notebook_edit, read_file, write_file
from ._common import CONFIG_KEYS
from ._watch import FILE_WATCH, FileWatch

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


__all__ = [
    "FILE_WATCH",
    "TOOLS",
    "FileWatch",
    "callgate_register_tools",
    "callgate_session_end",
    "callgate_session_start",
]
