"""`GoalBook` (``session.extension(GOALS)``): the session's goal, its lifecycle, authority
and rounds.

The book is the only thing that changes a goal. Every change is checked in the
spec's order (authority, goal id, revision, the action's fields, the
transition), built as a new immutable `Goal`, persisted, and only then made
current: a refusal or a failed write changes nothing, in memory or on disk.

Integrator API (goals-and-workflow.md §1 "Host API")::

    session.begin_turn("human")                 # the user spoke; the model may create a goal
    ...run the model...
    while session.extension(GOALS).should_continue():
        r = session.extension(GOALS).start_round()         # an automatic turn bound to the goal
        ...run the model on r.prompt...
"""

from __future__ import annotations

import logging
import secrets
import threading
from typing import Any

import attrs
from callgate.store import StoreError

from ._errors import goal_error
from ._goal import UNFINISHED, Goal, utc_now
from ._store import GoalStore

log = logging.getLogger("callgate.goals")

COMPLETE_NOTE = ("Finish the current turn with an accurate final summary for the user; no "
                 "further automatic goal round will be admitted.")
CONSUMES = {
    "edit": ("objective", "max_goal_rounds"),
    "pause": (),
    "resume": (),
    "complete": (),
    "blocked": ("blocked_reason",),
}


@attrs.frozen
class GoalRound:
    """One automatic round: which goal, which round number, and the prompt to run the model on."""

    goal_id: str
    number: int
    objective: str
    prompt: str


@attrs.frozen
class Outcome:
    """A successful goal tool call: the effective goal and the instruction for the model."""

    goal: Goal | None
    instruction: str | None = None


class GoalBook:
    """The goal state of one session (``session.extension(GOALS)``), restored from the
    session store."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._lock = threading.RLock()
        self._file = GoalStore(session)
        self._round: GoalRound | None = None
        loaded = self._file.load()
        self._unreadable = loaded.unreadable
        self._goal = loaded.goal
        if self._goal is not None and self._goal.armed:
            # A restarted host never resumes automatic work on its own (§1 Persistence).
            restored = attrs.evolve(self._goal, armed=False, stop_reason="cold-restore",
                                    updated_at=utc_now())
            try:
                self._commit(restored)
            except (OSError, StoreError):
                log.warning("could not record the cold restore of goal %s", restored.id,
                            exc_info=True)
                self._goal = restored

    # --- what the integrator reads ----------------------------------------------------

    def current(self) -> dict[str, Any] | None:
        """The current goal's snapshot, or ``None``."""
        with self._lock:
            return self._goal.snapshot() if self._goal else None

    @property
    def unreadable(self) -> str | None:
        """Why the session's goal state could not be read (changes are refused), or None."""
        return self._unreadable

    @property
    def round(self) -> GoalRound | None:
        """The automatic round the current turn is bound to, or ``None``."""
        return self._round

    def should_continue(self) -> bool:
        """True iff a goal is active, armed and under its round limit.

        An active armed goal that has reached its limit is disarmed here with
        ``round-limit`` (persisted), and the answer is False.
        """
        with self._lock:
            goal = self._goal
            if self._unreadable or goal is None or goal.phase != "active" or not goal.armed:
                return False
            if goal.at_limit:
                self._commit(attrs.evolve(goal, armed=False, stop_reason="round-limit",
                                          updated_at=utc_now()))
                return False
            return True

    def start_round(self) -> GoalRound | None:
        """Begin an automatic turn: bound to the goal if a round is due, else unbound (None).

        Either way the session's turn origin becomes ``automatic``: a model run
        after a ``None`` answer may only read the goal (fail closed). This does
        not fire ``callgate_turn_start``; ``begin_turn("automatic")`` does, and
        calls this.
        """
        with self._lock:
            self._session.turn_origin = "automatic"
            self._round = None
            if not self.should_continue():
                return None
            goal = self._goal
            assert goal is not None
            goal = attrs.evolve(goal, rounds_started=goal.rounds_started + 1,
                                updated_at=utc_now())
            self._commit(goal)
            self._round = GoalRound(goal.id, goal.rounds_started, goal.objective,
                                    self._prompt(goal))
            return self._round

    def turn_started(self, origin: str) -> None:
        """``callgate_turn_start``: a human turn unbinds; an automatic one starts a round."""
        if origin == "automatic":
            self.start_round()
        else:
            with self._lock:
                self._round = None

    # --- what the tools call ------------------------------------------------------------

    def get(self) -> Outcome:
        with self._lock:
            if self._unreadable:
                return Outcome(None, f"The goal state could not be loaded: {self._unreadable}. "
                               "No goal is active; create_goal and update_goal are refused "
                               "until the file is repaired or removed by the user.")
            goal = self._goal
            if goal is not None and goal.stop_reason == "cold-restore" and not goal.armed:
                return Outcome(goal, "The goal was restored after a restart and is disarmed; no "
                               "automatic round runs until a human turn resumes it.")
            return Outcome(goal)

    def create(self, objective: str, max_goal_rounds: int | None) -> Outcome:
        tool = "create_goal"
        with self._lock:
            self._authorize(tool, "create_goal", None)
            self._check_readable(tool)
            current = self._goal
            if current is not None and current.phase in UNFINISHED:
                # only an active goal can be completed: the advice names the steps that work
                finish = ("complete it" if current.phase == "active" else
                          "resume it and complete it")
                raise goal_error(tool, "ALREADY_EXISTS",
                                 f"goal {current.id} is {current.phase} and unfinished; change it "
                                 f"with update_goal, or {finish} (update_goal) before creating "
                                 "another")
            now = utc_now()
            goal = Goal(id=secrets.token_hex(16), revision=1, objective=objective.strip(),
                        phase="active", armed=True, max_goal_rounds=max_goal_rounds,
                        rounds_started=0, stop_reason=None, blocked_reason=None,
                        created_at=now, updated_at=now)
            self._commit(goal)
            return Outcome(goal)

    def update(self, args: dict[str, Any]) -> Outcome:
        tool = "update_goal"
        action = args["action"]
        with self._lock:
            self._authorize(tool, action, args["goal_id"])
            self._check_readable(tool)
            goal = self._goal
            if goal is None or goal.id != args["goal_id"]:
                where = f"the current goal is {goal.id}" if goal else "there is no current goal"
                raise goal_error(tool, "NOT_FOUND", f"no goal with id {args['goal_id']} "
                                 f"({where}); call get_goal")
            if args["revision"] != goal.revision:
                raise goal_error(tool, "STALE_REVISION", f"revision {args['revision']} is stale; "
                                 f"current revision is {goal.revision}; call get_goal and retry")
            changed = self._apply(tool, action, goal, args)
            changed = attrs.evolve(changed, revision=goal.revision + 1, updated_at=utc_now())
            self._commit(changed)
            return Outcome(changed, _instruction(action, args))

    # --- the checks -------------------------------------------------------------------

    def _authorize(self, tool: str, action: str, goal_id: str | None) -> None:
        origin = self._session.turn_origin
        if origin == "human":
            return
        bound = self._round
        if (origin == "automatic" and bound is not None and action in ("complete", "blocked")
                and goal_id == bound.goal_id):
            return
        raise goal_error(tool, "USER_AUTHORITY_REQUIRED",
                         f"{action} needs a direct human turn; no goal state was changed")

    def _check_readable(self, tool: str) -> None:
        if self._unreadable:
            raise goal_error(tool, "UNSUPPORTED_VERSION", f"{self._unreadable}; the file is "
                             "left untouched and no goal state was changed")

    def _apply(self, tool: str, action: str, goal: Goal, args: dict[str, Any]) -> Goal:
        """The action's fields, then its transition; returns the changed goal (not committed)."""
        if action == "edit":
            return self._edit(tool, goal, args)
        if action == "blocked":
            reason = (args.get("blocked_reason") or "").strip()
            if not reason:
                raise goal_error(tool, "INVALID_BLOCK_REASON", "blocked requires blocked_reason")
            self._require_phase(tool, action, goal, ("active",))
            minimum = self._session.host.config("goals").get("min_rounds_before_block", 1)
            if self._session.turn_origin == "automatic" and goal.rounds_started < minimum:
                raise goal_error(tool, "BLOCKED_TOO_EARLY",
                                 f"an automatic round may report blocked from round {minimum} "
                                 f"on; this is round {goal.rounds_started}; keep working on the "
                                 "objective")
            return attrs.evolve(goal, phase="blocked", armed=False, stop_reason="model-blocked",
                                blocked_reason=reason)
        if action == "pause":
            self._require_phase(tool, action, goal, ("active",))
            return attrs.evolve(goal, phase="paused", armed=False, stop_reason="user-paused")
        if action == "complete":
            self._require_phase(tool, action, goal, ("active",))
            return attrs.evolve(goal, phase="complete", armed=False, stop_reason="complete")
        assert action == "resume"
        if goal.phase == "active" and goal.armed:
            raise goal_error(tool, "INVALID_TRANSITION",
                             "cannot resume a goal in phase active: it is already active")
        self._require_phase(tool, action, goal, ("paused", "blocked", "active"))
        if goal.at_limit:
            raise goal_error(tool, "ROUND_LIMIT",
                             f"the goal has started {goal.rounds_started} of its "
                             f"{goal.max_goal_rounds} automatic rounds; raise max_goal_rounds "
                             "(edit) or set it to null before resuming")
        return attrs.evolve(goal, phase="active", armed=True, stop_reason=None,
                            blocked_reason=None)

    def _edit(self, tool: str, goal: Goal, args: dict[str, Any]) -> Goal:
        objective = args.get("objective")
        has_limit = "max_goal_rounds" in args
        if objective is None and not has_limit:
            raise goal_error(tool, "INVALID_EDIT", "edit requires objective and/or "
                             "max_goal_rounds")
        changes: dict[str, Any] = {}
        if objective is not None:
            if not objective.strip():
                raise goal_error(tool, "INVALID_OBJECTIVE",
                                 "objective must not be empty; pass the new objective, or omit "
                                 "it (or null) to keep the current one")
            changes["objective"] = objective.strip()
        if has_limit:
            limit = args["max_goal_rounds"]
            if limit is not None and limit < goal.rounds_started:
                raise goal_error(tool, "INVALID_MAX_ROUNDS",
                                 f"max_goal_rounds {limit} is below the {goal.rounds_started} "
                                 "rounds already started; pass at least that, or null for no "
                                 "limit")
            changes["max_goal_rounds"] = limit
        self._require_phase(tool, "edit", goal, ("active", "paused", "blocked"))
        return attrs.evolve(goal, **changes)

    @staticmethod
    def _require_phase(tool: str, action: str, goal: Goal, phases: tuple[str, ...]) -> None:
        if goal.phase not in phases:
            raise goal_error(tool, "INVALID_TRANSITION",
                             f"cannot {action} a goal in phase {goal.phase}")

    # --- state ----------------------------------------------------------------------------

    def _commit(self, goal: Goal) -> None:
        """Persist first, then make current: a failed write leaves the old goal in place."""
        self._file.save(goal)
        self._goal = goal

    def _prompt(self, goal: Goal) -> str:
        limit = "unlimited" if goal.max_goal_rounds is None else str(goal.max_goal_rounds)
        prompt = (f"Automatic goal round {goal.rounds_started} of {limit}. Objective: "
                  f"{goal.objective}. When achieved, call update_goal action \"complete\"; if you "
                  "cannot progress without the user, action \"blocked\" with a reason. "
                  f"goal_id={goal.id} revision={goal.revision}.")
        if not self._session.is_visible("update_goal"):
            prompt += (' (reach update_goal through use_capability, capability_id '
                       '"tool:update_goal")')
        return prompt


def ignored_fields(action: str, args: dict[str, Any]) -> list[str]:
    """The supplied fields ``action`` does not consume, in the spec's order."""
    consumed = CONSUMES[action]
    out = []
    if args.get("objective") is not None and "objective" not in consumed:
        out.append("objective")
    if "max_goal_rounds" in args and "max_goal_rounds" not in consumed:
        out.append("max_goal_rounds")
    if args.get("blocked_reason") is not None and "blocked_reason" not in consumed:
        out.append("blocked_reason")
    return out


def _instruction(action: str, args: dict[str, Any]) -> str | None:
    parts = []
    ignored = ignored_fields(action, args)
    if ignored:
        parts.append(f"Fields not applied: {', '.join(ignored)}. Action \"{action}\" ignores "
                     "these fields; the returned goal contains the effective state.")
    if action in ("complete", "blocked"):
        parts.append(COMPLETE_NOTE)
    return " ".join(parts) or None
