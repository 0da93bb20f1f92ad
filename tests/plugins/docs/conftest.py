"""Fixtures for the docs tests: a session with callgate-docs and a project's documents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import callgate_docs
import pytest
from callgate.testing import CallgateSession

PROJECT_FILES = {
    "README.md": "# Shop\n\nA shop. Deploy with `make ship`.\n",
    "docs/setup.md": ("# Setup\n\nInstall the toolchain.\n\n## Database\n\nThe dev database is "
                      "Postgres on port 5433.\n\n```sh\n# not a heading\npsql -p 5433\n```\n\n"
                      "Billing\n-------\n\nInvoices are sent on the 1st.\n\n## Database\n\n"
                      "A second section with the same heading.\n"),
}


@pytest.fixture
def docs(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """``docs(paths=[...], files=PROJECT_FILES, **config)``: a session with callgate-docs."""

    def make(paths: list[str] | None = None, files: dict[str, str] | None = None,
             **config: Any) -> CallgateSession:
        table = {"paths": paths if paths is not None else ["README.md", "docs"], **config}
        return callgate_session(plugins=[callgate_docs], config={"docs": table},
                                files=PROJECT_FILES if files is None else files)

    return make


def call(s: CallgateSession, **args: Any) -> str:
    return s.expect_ok("docs", args)
