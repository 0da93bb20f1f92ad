"""A PostgreSQL backend of the callgate session store (`callgate.store.SessionStore`).

``[sessions] store = "postgresql://user@host/db"`` (any libpq URL: ``?host=/run/pg`` for a
unix socket, ``sslmode=...``, a password from ``~/.pgpass`` or ``$PGPASSWORD``) makes every
process of every machine that reaches the database record into one store, so several
``callgate serve --http`` processes serve the same sessions. Registered for the ``postgresql``
and ``postgres`` schemes under the ``callgate.stores`` entry-point group
(``callgate_store_postgres.plugin:open_store``).

- psycopg 3 with a ``psycopg_pool`` connection pool (autocommit connections); every write
  group is one transaction (``BEGIN`` ... ``COMMIT``, nothing of it applied on an error);
  ``restore`` reads in one ``REPEATABLE READ`` transaction.
- The schema is versioned (``callgate_meta.schema_version``) and created under a
  transaction-scoped advisory lock, so processes starting together do not race; a newer
  schema is refused, never downgraded. Tables are prefixed ``callgate_`` and live in the
  connection's ``search_path`` schema (``?options=-csearch_path%3Dmine`` chooses one).
- Search is PostgreSQL full-text search (``simple`` configuration, ``ts_rank``) over the
  words of each text, split by the same ``\\w+`` rule as the SQLite backend, so
  ``src/tokenizer.py:10`` is found by ``tokenizer``; snippets mark matches ``[like this]``.
- Text PostgreSQL cannot hold is made storable: a lone surrogate reads U+FFFD (as in
  SQLite), and so does a NUL character (PostgreSQL text has none); ledger paths are kept as
  bytes and come back exactly.
- `recover` settles the runs of dead processes of *this* machine (by pid and start time);
  the runs of other machines are theirs to settle.
"""

from ._store import BACKEND, SCHEMA, SCHEMA_VERSION, PostgresStore
from .plugin import open_store

__all__ = ["BACKEND", "SCHEMA", "SCHEMA_VERSION", "PostgresStore", "open_store"]
