"""callgate's session tools: ``list_sessions``, ``read_session``, ``history``.

They read the session store (`callgate.store`): the sessions earlier processes (and
this one) recorded, with their messages, calls and results. ``list_sessions`` lists
them newest first; ``read_session`` shows one turn by turn; ``history`` searches them
(ranked full-text search, bm25, with snippets) or shows the entries around a match.
A session sees only its own principal's sessions (the operating-system user's, or a
bearer token's under ``callgate serve --http``), and by default only those of its own
workspace; ``[sessions] allow_global_history = true`` (user config only) opens every
workspace of that principal. A session outside the scope is refused exactly as an
unknown one is: its existence is not revealed.

The tools are hidden (reached through ``use_capability``) and read-only.

It also adds ``callgate sessions`` (list, show, search, export, prune) to the command line
(``_cli``; the ``callgate.commands`` entry point ``callgate_sessions.plugin:register_command``).

Entry points (``pyproject.toml``): ``[project.entry-points.callgate] sessions =
"callgate_sessions"``, ``[project.entry-points."callgate.commands"] sessions = ...``.
"""

from .plugin import callgate_register_tools

__all__ = ["callgate_register_tools"]
