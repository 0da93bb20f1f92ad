"""The values exchanged with the integrator's runner, and the persisted record of one child.

How a child ended (`SubagentOutcome`, `SubagentError`, `STATUSES`) is the library's
(`callgate_toolkit.subagents`): the skills plugin runs children through the same runner
and book."""

from __future__ import annotations

from typing import Any, Protocol

import attrs
from callgate_toolkit.subagents import STATUSES, Status, SubagentError, SubagentOutcome


@attrs.frozen(kw_only=True)
class SubagentRequest:
    """One child to run. ``session`` is the child's own session (same workspace, an empty
    observation ledger, no turn origin, the parent's MCP connections) for the tool calls
    the child makes, opened with ``profile`` (a `callgate.ChildProfile`, enforced by the
    pipeline; ``profile.name`` says which built-in profile, e.g. ``explore``);
    ``continuation`` is the earlier record when the model passed ``continue_from``;
    ``max_steps`` is how many model turns to allow (``None``: the runner's own limit)."""

    ref: str
    description: str
    prompt: str
    workspace: str
    continuation: SubagentRecord | None = None
    session: Any = None
    profile: Any = None
    max_steps: int | None = None


class SubagentRunner(Protocol):
    """The integrator's runner: typically a model loop over ``request.session``."""

    async def run(self, request: SubagentRequest) -> SubagentOutcome: ...


@attrs.frozen(kw_only=True)
class SubagentRecord:
    """``subagents/<ref>.json``: one child's result, kept so it can be paged and continued.

    ``tool`` is the tool that started the child and ``profile`` the child's own
    `callgate.ChildProfile` (as JSON): ``continue_from`` continues a child only through
    that tool and always with that profile (a record without them is not continued)."""

    ref: str
    description: str
    status: str
    retryable: bool
    error_code: str | None
    answer: str | None
    state: Any
    attempts: int
    workspace: str
    created_at: str
    finished_at: str | None
    tool: str | None = None
    profile: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, **attrs.asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> SubagentRecord:
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError("not a version 1 subagent record")
        fields = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})


__all__ = ["STATUSES", "Status", "SubagentError", "SubagentOutcome", "SubagentRecord",
           "SubagentRequest", "SubagentRunner"]
