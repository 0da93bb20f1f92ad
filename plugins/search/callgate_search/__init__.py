"""callgate's search tools: ``glob``, ``grep`` and ``ls``.

- ``grep`` runs the ``rg`` binary of the PyPI ``ripgrep`` package (found next to
  the interpreter, then on ``PATH``) and falls back to a pure-Python engine
  (``pathspec`` + ``regex``) held to byte parity with it. ``[search]
  grep_engine`` picks one: ``"auto"`` (default), ``"rg"`` or ``"python"``.
- ``glob`` finds files by pattern; ``ls`` lists a directory, flat or recursive.
- Every walk stops at ``[search] timeout_s`` (default 30 s) and says so.

The walker (`walk_files`, `IgnoreRules`, `PRUNE`) is public: the
``code`` plugin walks the workspace through it, so every tool skips the same
files.

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] search = "callgate_search"``.
"""

from ._globs import Glob, GlobError, compile_glob
from ._plugin import CONFIG_SCHEMA, callgate_register_tools
from ._walk import PRUNE, FileEntry, IgnoreRules, join_rel, walk_files

__all__ = [
    "CONFIG_SCHEMA",
    "PRUNE",
    "FileEntry",
    "Glob",
    "GlobError",
    "IgnoreRules",
    "callgate_register_tools",
    "compile_glob",
    "join_rel",
    "walk_files",
]
