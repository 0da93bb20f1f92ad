"""callgate's search tools: ``glob``, ``grep`` and ``ls``.

- ``grep`` runs the ``rg`` binary of the PyPI ``ripgrep`` package (found next to
  the interpreter, then on ``PATH``) and falls back to a pure-Python engine
  (``pathspec`` + ``regex``) held to byte parity with it. ``[search]
  grep_engine`` picks one: ``"auto"`` (default), ``"rg"`` or ``"python"``.
- ``glob`` finds files by pattern; ``ls`` lists a directory, flat or recursive.
- Every walk stops at ``[search] timeout_s`` (default 30 s) and says so.

Walking with ignore rules and the glob dialect are the core's (`callgate.paths`):
the ``code`` plugin and the ``[permissions]`` path rules use the same ones, so
every tool skips the same files and every pattern means the same paths.

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] search = "callgate_search"``.
"""

from .config import CONFIG_SCHEMA
from .plugin import callgate_register_tools

__all__ = ["CONFIG_SCHEMA", "callgate_register_tools"]
