"""callgate's memory tools: ``remember``, ``forget``, ``memory``: facts that last across sessions.

One fact per Markdown file with YAML front matter, in two stores: ``project`` (one per
workspace) and ``global``, under callgate's state directory unless ``[memory]
project_dir`` / ``global_dir`` say otherwise. Each store has a ``MEMORY.md`` index whose
managed lines callgate rewrites and whose other lines it keeps. Files are plain text for
people to read and edit by hand: an edit is seen on the next call. Search is BM25 over an
index kept in memory between calls (SQLite FTS5), refreshed only for changed files.

Safety: a fact is data shown inside a fence, never an instruction to the host; bodies are
capped (``[memory] max_fact_bytes``); credential-shaped text is refused before anything is
written; writes are atomic and serialized per store across threads and processes.

For integrators::

    system_prompt += session.extension(MEMORY).prompt()   # the protocol and the pinned facts
    recalled = session.extension(MEMORY).recall(user_message)    # relevant facts for this turn
    if recalled.text:
        user_message = recalled.text + "\\n\\n" + user_message

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] memory = "callgate_memory"``.
"""

from typing import TYPE_CHECKING, Any

from ._keys import MEMORY
from .plugin import callgate_register_tools

if TYPE_CHECKING:
    from ._fact import Fact
    from ._session import Recall, SessionMemory

#: imported on first use: the store and the index are no part of registering (issue 38)
_LAZY = {"Fact": "_fact", "Recall": "_session", "SessionMemory": "_session"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)

__all__ = [
    "MEMORY",
    "Fact",
    "Recall",
    "SessionMemory",
    "callgate_register_tools",
]
