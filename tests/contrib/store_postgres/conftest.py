"""A PostgreSQL server per test session; ``store`` is the backend on a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .pg_server import PgServer, find_bin_dir, running_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if find_bin_dir() is None:
        pytest.skip(
            "PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)"
        )
    with running_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    return pg_server.new_database()


@pytest.fixture
def store(pg_url: str) -> Iterator[Any]:
    from callgate_store_postgres import PostgresStore

    opened = PostgresStore.open(pg_url)
    yield opened
    opened.close()


@pytest.fixture
def writer(store: Any) -> Any:
    from tests.core.store.conftest import Writer

    return Writer(store)
