"""The shell plugin's session-extension key, apart from the object it names: the plugin
registers it without importing the job machinery (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._jobs import JobTable

#: ``session.extension(JOBS)``: the session's background jobs
JOBS: SessionKey[JobTable] = SessionKey("jobs")
