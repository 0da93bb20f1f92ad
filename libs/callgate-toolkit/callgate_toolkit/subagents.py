"""How a subagent (a child session run by the integrator's runner) ended: `SubagentOutcome`.

The tasks plugin's ``task`` and the skills plugin's subagent skills both hand a child to
the integrator's runner (the ``callgate_subagent_runner`` hook) and record what comes
back in one book, so both speak this one type. A runner raises `SubagentError` for a
failure it can name.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

STATUSES = ("completed", "partial", "failed", "cancelled")
Status = Literal["completed", "partial", "failed", "cancelled"]


class SubagentError(Exception):
    """Raised by a runner for a failure it can name: ``code`` becomes the child's
    ``error_code``, and ``retryable`` says whether ``continue_from`` may retry it."""

    def __init__(self, code: str, retryable: bool = False, message: str | None = None) -> None:
        super().__init__(message or code)
        self.code = code
        self.retryable = retryable


@attrs.frozen(kw_only=True)
class SubagentOutcome:
    """How a child ended. ``answer`` is its final (or last visible) answer; ``state`` is
    whatever the runner needs to continue it later (JSON-compatible to survive a restart).
    ``retryable`` left as ``None`` means true for ``partial`` only."""

    status: Status
    answer: str | None = None
    error_code: str | None = None
    retryable: bool | None = None
    state: Any = None

    @property
    def is_retryable(self) -> bool:
        return self.status == "partial" if self.retryable is None else bool(self.retryable)


__all__ = ["STATUSES", "Status", "SubagentError", "SubagentOutcome"]
