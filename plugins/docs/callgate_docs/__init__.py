"""callgate's ``docs`` tool: search and read documentation by heading section.

Two doc sets: callgate's own user documentation (shipped inside this package, so a model
can learn how its host is configured) and a project's documents named in ``[docs]
paths`` (files or directories, confined to the workspace like every file tool's path).
Documents are split into heading sections with markdown-it-py and ranked with BM25
(SQLite FTS5) over an index kept between calls and refreshed only for changed files.

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] docs = "callgate_docs"``.
"""

from ._host_docs import host_docs_dir
from .plugin import callgate_register_tools

__all__ = ["callgate_register_tools", "host_docs_dir"]
