"""Where a call runs once every policy stage has passed it: the executor seam (issue 37).

The pipeline's last stage is its session's executor's ``dispatch``. A session is bound to
one executor when it opens (`stages_for` puts the executor's stage in place of
`pipeline.dispatch`), so a local session's stages are exactly `STAGES` and pay nothing.

- `LOCAL` runs the call in this process: the host gate, then the tool (`pipeline.dispatch`).
- A remote executor (`callgate._executor.RemoteExecutor`) sends the validated, permitted,
  gated call to a worker next to the workspace (``callgate worker``), which runs the same
  `pipeline.dispatch` there: confinement, the stale guard, protected paths, the sandbox
  and output caps hold where the files are. Resolution, validation, hooks, permissions,
  approval, shaping and records stay here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .pipeline import dispatch as _dispatch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .pipeline import Stage
    from .view import SessionView


class Executor(Protocol):
    """What a session's calls run on once judged."""

    #: ``"local"``, or how the worker is reached (for messages and ``session.executor``)
    name: str

    @property
    def dispatch(self) -> Stage:
        """The pipeline's last stage: runs ``step`` and leaves its result in ``step.result``."""
        ...

    def for_child(self, child: SessionView) -> Executor:
        """The executor of a child session (a subagent works in the same place)."""
        ...

    def delivered(self, session: SessionView, call_ids: Sequence[str]) -> None:
        """A batch's results were shaped and handed back: tell the plugins where the
        session's tools run (``callgate_results_delivered``)."""
        ...

    async def close(self, session: SessionView) -> None:
        """The session is closing: end what the executor holds for it."""
        ...


class LocalExecutor:
    """Runs every call in this process (`pipeline.dispatch`): today's behaviour."""

    name = "local"

    @property
    def dispatch(self) -> Stage:
        return _dispatch

    def for_child(self, child: SessionView) -> LocalExecutor:
        return self

    def delivered(self, session: SessionView, call_ids: Sequence[str]) -> None:
        session.host.hooks.results_delivered(call_ids, session)

    async def close(self, session: SessionView) -> None:
        return None


#: the executor of every session not bound to a worker
LOCAL = LocalExecutor()

__all__ = ["LOCAL", "Executor", "LocalExecutor"]
