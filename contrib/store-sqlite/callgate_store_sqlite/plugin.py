"""What the ``callgate.stores`` entry points name: `open_store`, the opener of plain paths
(the ``file`` scheme: the default store and a path in ``[sessions] store``) and of
``sqlite:///path`` URLs."""

from __future__ import annotations

from ._store import SqliteReader, SqliteStore


def open_store(location: str, read_only: bool = False) -> SqliteStore:
    """The ``callgate.stores`` opener: ``location`` is a path, ``file://PATH`` or
    ``sqlite://PATH``; ``read_only`` opens an existing file to read only (`SqliteReader`)."""
    scheme, sep, rest = location.partition("://")
    path = rest if sep and scheme.lower() in ("file", "sqlite") else location
    return SqliteReader.open(path) if read_only else SqliteStore.open(path)
