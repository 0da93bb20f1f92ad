"""`Goal`: one immutable goal snapshot, and its JSON form (goals-and-workflow.md §1).

A change builds a new `Goal` with `attrs.evolve`; the book persists it first and
only then makes it current, so a refused or failed change leaves nothing behind.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import attrs

PHASES = ("active", "paused", "blocked", "complete")
UNFINISHED = ("active", "paused", "blocked")
STOP_REASONS = (None, "user-paused", "complete", "model-blocked", "round-limit", "cold-restore")
GOAL_ID = re.compile(r"^[0-9a-f]{32}$")


def utc_now() -> str:
    """The current time as ISO-8601 UTC with a ``Z`` suffix (millisecond precision)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class MalformedGoal(ValueError):
    """A stored snapshot that does not have the shape this version writes."""


@attrs.frozen(kw_only=True)
class Goal:
    """A goal as the model and the integrator see it (snake_case, like the tool inputs)."""

    id: str
    revision: int
    objective: str
    phase: str
    armed: bool
    max_goal_rounds: int | None
    rounds_started: int
    stop_reason: str | None
    blocked_reason: str | None
    created_at: str
    updated_at: str

    @property
    def at_limit(self) -> bool:
        return self.max_goal_rounds is not None and self.rounds_started >= self.max_goal_rounds

    def snapshot(self) -> dict[str, Any]:
        """The JSON object every goal tool returns, keys in the spec's order."""
        blocked = None
        if self.blocked_reason is not None:
            blocked = {"code": "model-blocked", "message": self.blocked_reason}
        return {
            "id": self.id,
            "revision": self.revision,
            "objective": self.objective,
            "phase": self.phase,
            "armed": self.armed,
            "max_goal_rounds": self.max_goal_rounds,
            "rounds_started": self.rounds_started,
            "stop_reason": self.stop_reason,
            "blocked_reason": blocked,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_snapshot(cls, data: Any) -> Goal:
        """Rebuild a goal from `snapshot` output; raises `MalformedGoal` on any other shape."""
        if not isinstance(data, dict):
            raise MalformedGoal("the goal is not an object")
        try:
            blocked = data["blocked_reason"]
            message = None
            if blocked is not None:
                if not isinstance(blocked, dict) or not isinstance(blocked.get("message"), str):
                    raise MalformedGoal("blocked_reason has an unknown shape")
                message = blocked["message"]
            goal = cls(
                id=data["id"], revision=data["revision"], objective=data["objective"],
                phase=data["phase"], armed=data["armed"],
                max_goal_rounds=data["max_goal_rounds"], rounds_started=data["rounds_started"],
                stop_reason=data["stop_reason"], blocked_reason=message,
                created_at=data["created_at"], updated_at=data["updated_at"],
            )
        except KeyError as exc:
            raise MalformedGoal(f"the goal has no {exc.args[0]!r}") from None
        checks = [
            isinstance(goal.id, str) and GOAL_ID.match(goal.id) is not None,
            _is_int(goal.revision) and goal.revision >= 1,
            isinstance(goal.objective, str),
            goal.phase in PHASES,
            isinstance(goal.armed, bool),
            goal.max_goal_rounds is None or (_is_int(goal.max_goal_rounds)
                                             and goal.max_goal_rounds >= 1),
            _is_int(goal.rounds_started) and goal.rounds_started >= 0,
            goal.stop_reason in STOP_REASONS,
            isinstance(goal.created_at, str) and isinstance(goal.updated_at, str),
        ]
        if not all(checks):
            raise MalformedGoal("a field has a value this version does not write")
        return goal


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
