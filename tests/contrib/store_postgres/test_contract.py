"""The session store's contract tests (tests/core/store/test_store_contract.py), run
against the PostgreSQL backend on a real server."""

from tests.core.store.test_store_contract import *  # noqa: F403
