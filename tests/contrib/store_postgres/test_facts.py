"""The execution-fact contract tests (tests/core/store/test_store_facts.py), run against
the PostgreSQL backend on a private server (``store`` and ``writer`` of conftest.py)."""

from tests.core.store.test_store_facts import *  # noqa: F403
