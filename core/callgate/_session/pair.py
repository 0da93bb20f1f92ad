"""`SessionPair`: a planner and an executor over one workspace (``SessionPair(host, workspace)``).

Two sessions of one family (`SharedResources`): each has its own tool table and
``use_capability`` frontend, its own observation ledger, results and records in the store,
but they share the host's connections (one MCP server process each), so what the planner
connected and discovered stays callable by the executor after the handoff.

- The **planner** runs in plan mode for its whole life under the ``planner`` profile:
  read-only calls, plus MCP tools that do not declare ``readOnlyHint`` as long as they are
  not ``destructiveHint`` (`ChildProfile.mcp` ``"not_destructive"``); every other writer is
  blocked by plan mode, every destructive MCP tool by the profile.
- The **executor** starts in plan mode too: nothing that writes runs until the plan is
  approved (`approve`), which ends its plan mode and tells both models with their next
  results. Permission rules still apply to the executor afterwards.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .._pipeline.childprofile import ChildProfile
from .._pipeline.shared import SharedResources
from .session import Session

if TYPE_CHECKING:
    from .._pipeline.view import HostView

PLANNER = ChildProfile(name="planner", mcp="not_destructive")

APPROVED_EXECUTOR = (
    "[plan approved] The user approved the plan: calls that change files or run commands "
    "are allowed now (permission rules still apply). Carry out the plan."
)
APPROVED_PLANNER = (
    "[plan approved] The user approved the plan and handed it to the executor; this "
    "session stays read-only."
)


class SessionPair:
    """A planner and an executor (see the module docstring): ``SessionPair(host, workspace,
    session_dir=None, origin=None, *, planner_profile=None, principal=None)``. They are
    independent sessions
    (their own ``use_capability``, ledgers and records) sharing the host's connections. The
    planner stays in plan mode under ``planner_profile`` (default: MCP tools without
    ``readOnlyHint`` allowed, never a destructive one); the executor is in plan mode until
    `approve`. ``session_dir`` gets ``planner/`` and ``executor/`` below it. ``principal``
    names who both belong to (as `Host.open_session`'s; default: the operating-system user).
    Use ``async with`` or ``await pair.close()``."""

    def __init__(
        self,
        host: HostView,
        workspace: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        origin: str | None = None,
        *,
        planner_profile: ChildProfile | None = None,
        principal: str | None = None,
    ) -> None:
        if not os.path.isdir(workspace):
            raise FileNotFoundError(f"workspace {os.fspath(workspace)} is not a directory")
        shared = SharedResources()
        planner_dir = executor_dir = None
        if session_dir is not None:
            planner_dir = os.path.join(os.fspath(session_dir), "planner")
            executor_dir = os.path.join(os.fspath(session_dir), "executor")
        #: the session that plans: plan mode, the ``planner`` profile
        self.planner: Session = Session(
            host,
            workspace,
            planner_dir,
            origin,
            profile=planner_profile or PLANNER,
            shared=shared,
            principal=principal,
        )
        try:
            #: the session that carries the plan out once it is approved
            self.executor: Session = Session(
                host, workspace, executor_dir, origin, shared=shared, principal=principal
            )
        except BaseException:
            self.planner._end()
            raise
        self.planner.set_mode("plan")
        self.executor.set_mode("plan")
        self._approved = False

    @property
    def approved(self) -> bool:
        return self._approved

    def approve(self) -> None:
        """The human approved the plan: the executor leaves plan mode (the planner never
        does); both are told with their next results. Idempotent."""
        if self._approved:
            return
        self._approved = True
        self.executor.set_mode("default")
        self.executor.notices.put("callgate.mode", APPROVED_EXECUTOR)
        self.planner.notices.put("callgate.mode", APPROVED_PLANNER)

    async def close(self) -> None:
        """Close both sessions (the shared connections stop with the second)."""
        try:
            await self.planner.close()
        finally:
            await self.executor.close()

    async def __aenter__(self) -> SessionPair:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
