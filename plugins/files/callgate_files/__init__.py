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

(the package, which re-exports the hooks of ``plugin.py``; the tools are in ``tools/``,
the keys it adds to ``[files]`` in ``config.py``).
"""

from __future__ import annotations

from ._watch import FILE_WATCH, FileWatch
from .config import CONFIG_KEYS
from .plugin import TOOLS, callgate_register_tools, callgate_session_end, callgate_session_start

__all__ = ["CONFIG_KEYS", "FILE_WATCH", "TOOLS", "FileWatch", "callgate_register_tools",
           "callgate_session_end", "callgate_session_start"]
