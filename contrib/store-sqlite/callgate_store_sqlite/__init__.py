"""The SQLite backend of the callgate session store (`callgate.store.SessionStore`): one
file, shared by every process of the machine; what it promises is in ``_store``'s docstring
(WAL, versioned migrations in ``migrations/``, 0600 files, settling dead processes' runs,
FTS5 search).

Registered under the ``callgate.stores`` entry-point group for the ``file`` scheme (a plain
path in ``[sessions] store``, and the default ``<state dir>/sessions/sessions.sqlite3``) and
for ``sqlite:///path`` URLs (``callgate_store_sqlite.plugin:open_store``). ``callgate[all]``
installs it; a bare ``callgate`` without any backend keeps sessions in memory only
(docs/sessions.md, "Without a store backend").
"""

from ._store import BACKEND, LATEST, SqliteReader, SqliteStore
from .plugin import open_store

__all__ = ["BACKEND", "LATEST", "SqliteReader", "SqliteStore", "open_store"]
