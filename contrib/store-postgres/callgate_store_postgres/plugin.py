"""What the ``callgate.stores`` entry points name: `open_store`, the opener of the
``postgresql://`` and ``postgres://`` schemes."""

from __future__ import annotations

from ._store import PostgresStore


def open_store(location: str) -> PostgresStore:
    """The ``callgate.stores`` opener: ``location`` is the ``postgresql://`` URL."""
    url = (
        "postgresql://" + location.split("://", 1)[1]
        if location.startswith("postgres://")
        else location
    )
    return PostgresStore.open(url)
