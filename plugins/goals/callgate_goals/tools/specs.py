"""The goal tools as declared data: names, descriptions, schemas and flags, with their code
named by `callgate.deferred` (issue 38). Registering the plugin imports this module and
neither the goal book nor its store; ``tools/goals.py`` is imported by the first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred

CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["objective"],
    "properties": {
        "objective": {"type": "string", "minLength": 1, "maxLength": 4000,
                      "description": "What the goal should achieve, in the user's terms."},
        "max_goal_rounds": {"type": ["integer", "null"], "minimum": 1,
                            "description": "At most this many automatic rounds; null or "
                                           "omitted means no limit."},
    },
}


GET_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}


UPDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["goal_id", "revision", "action"],
    "properties": {
        "goal_id": {"type": "string", "pattern": "^[0-9a-f]{32}$",
                    "description": "The id get_goal returned."},
        "revision": {"type": "integer", "minimum": 1,
                     "description": "The goal's current revision, exactly as get_goal returned "
                                    "it."},
        "action": {"type": "string", "enum": ["edit", "pause", "resume", "complete", "blocked"],
                   "description": "The lifecycle action to apply."},
        "objective": {"type": ["string", "null"], "maxLength": 4000,
                      "description": "edit only: the new objective (omit or null to keep it)."},
        "max_goal_rounds": {"type": ["integer", "null"], "minimum": 1,
                            "description": "edit only: the new round limit; null removes it, "
                                           "omitting it keeps it."},
        "blocked_reason": {"type": ["string", "null"], "maxLength": 2000,
                           "description": "blocked only: what the user must do or decide."},
    },
}


CREATE_DESCRIPTION = (
    "Start one long-running goal that later automatic rounds keep working on. Only a turn in "
    "which the human asked for it directly may create a goal. max_goal_rounds caps the "
    "automatic rounds; leave it out or pass null for no cap. An unfinished goal (active, "
    "paused or blocked) is never replaced: update it instead."
)


GET_DESCRIPTION = (
    "Return the current goal with its id, revision, phase, whether automatic rounds are armed, "
    "rounds started and why it stopped. goal is null when there is none. Call it before "
    "update_goal to get the exact id and revision."
)


UPDATE_DESCRIPTION = (
    "Change the goal with one lifecycle action, naming its exact goal_id and current revision: "
    "edit (objective and/or max_goal_rounds), pause, resume, complete, or blocked (with "
    "blocked_reason). A direct human turn may use any action; an automatic goal round may only "
    "complete or block its own goal. Fields the action does not use are ignored and reported. "
    "There is no status field and no continue action: leaving the goal alone continues it."
)


_CODE = "callgate_goals.tools.goals"

TOOLS = (
    ToolSpec(name="create_goal", description=CREATE_DESCRIPTION, schema=CREATE_SCHEMA,
             execute=deferred(f"{_CODE}:run_create"), validate=deferred(f"{_CODE}:check_create"),
             read_only=False, destructive=False, groups=("goals",), runs_at="host"),
    ToolSpec(name="get_goal", description=GET_DESCRIPTION, schema=GET_SCHEMA,
             execute=deferred(f"{_CODE}:run_get"), read_only=True, groups=("goals",),
             runs_at="host"),
    ToolSpec(name="update_goal", description=UPDATE_DESCRIPTION, schema=UPDATE_SCHEMA,
             execute=deferred(f"{_CODE}:run_update"), read_only=False, destructive=False,
             groups=("goals",), runs_at="host"),
)
