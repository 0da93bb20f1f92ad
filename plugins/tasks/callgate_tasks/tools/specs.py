"""The subagent tools as declared data: names, descriptions, schemas, flags and the built-in
profiles, with their code named by `callgate.deferred` (issue 38). Registering the plugin
imports this module and none of the runner, the book or the fleet scheduler; a tool's module
is imported by its first call (or the first session that asks whether it is available)."""

from __future__ import annotations

from typing import Any

from callgate import ChildProfile, ToolSpec, deferred

# --- task, parallel_tasks, read_subagent_result ----------------------------------------------
#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
TASK_KNOWN_AS = (
    "Task", "agent", "subagent", "dispatch_agent", "spawn_agent", "run_agent", "delegate",
)


REF = {"type": "string", "pattern": "^sa_[0-9a-f]{16}$"}


DESCRIPTION_FIELD = {"type": "string", "minLength": 1, "maxLength": 120,
                     "description": "A few words naming the child's job (shown in results)."}


PROMPT_FIELD = {"type": "string", "minLength": 1, "maxLength": 100000,
                "description": "The complete instructions: the child sees nothing else of "
                               "this conversation."}


TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["description", "prompt"],
    "properties": {
        "description": DESCRIPTION_FIELD,
        "prompt": PROMPT_FIELD,
        "continue_from": {**REF, "description": "Continue a retryable partial, failed or "
                                                "cancelled child under the same reference."},
    },
}


PARALLEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tasks"],
    "properties": {
        "tasks": {
            "type": "array", "minItems": 1, "maxItems": 8,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["description", "prompt"],
                "properties": {"description": DESCRIPTION_FIELD, "prompt": PROMPT_FIELD},
            },
        },
    },
}


READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ref"],
    "properties": {
        "ref": {**REF, "description": "The Subagent reference a task result printed."},
        "offset_bytes": {"type": "integer", "minimum": 0, "default": 0,
                         "description": "Where to start, in UTF-8 bytes (the offset the "
                                        "previous page named)."},
        "limit_bytes": {"type": "integer", "minimum": 1, "maximum": 24576, "default": 12288,
                        "description": "At most this many bytes in the page."},
    },
}


TASK_DESCRIPTION = (
    "Hand one self-contained job to a subagent that works in its own session on the same "
    "workspace, and wait for its answer. The result names a stable Subagent reference, the "
    "outcome (completed, partial, failed or cancelled, and whether it is retryable) and the "
    "answer, previewed when long. Pass continue_from with a retryable reference to continue "
    "that child instead of starting over."
)


PARALLEL_DESCRIPTION = (
    "Run 1 to 8 independent subagent jobs at the same time and wait for all of them. One "
    "child failing never stops the others. The combined result stays within the output "
    "limit: each child gets its reference, outcome and a fair preview of its answer; read "
    "a full answer with read_subagent_result."
)


READ_DESCRIPTION = (
    "Read one subagent's full answer page by page, by UTF-8 byte offset, using the Subagent "
    "reference a task or parallel_tasks result printed. Each page says where the next one "
    "starts."
)


#: the integrator hook every task tool needs (without it they are in no session)
NEEDS = ("callgate_subagent_runner",)


_TASK = "callgate_tasks.tools.task"

TOOLS = (
    ToolSpec(name="task", description=TASK_DESCRIPTION, schema=TASK_SCHEMA,
             execute=deferred(f"{_TASK}:run_task"), known_as=TASK_KNOWN_AS,
             available=deferred(f"{_TASK}:available"), groups=("tasks",), requires_hooks=NEEDS,
             runs_at="host"),
    ToolSpec(name="parallel_tasks", description=PARALLEL_DESCRIPTION, schema=PARALLEL_SCHEMA,
             execute=deferred(f"{_TASK}:run_parallel"), available=deferred(f"{_TASK}:available"),
             groups=("tasks",), requires_hooks=NEEDS, runs_at="host"),
    ToolSpec(name="read_subagent_result", description=READ_DESCRIPTION, schema=READ_SCHEMA,
             execute=deferred(f"{_TASK}:run_read"), read_only=True,
             available=deferred(f"{_TASK}:available"), groups=("tasks",),
             requires_hooks=NEEDS, runs_at="host"),
)



# --- read_only_task and the built-in profiles ------------------------------------------------
EXPLORE_TOOLS = ("read_file", "ls", "glob", "grep", "code_index")


RESEARCH_TOOLS = (*EXPLORE_TOOLS, "web_fetch")


REVIEW_TOOLS = (*EXPLORE_TOOLS, "bash", "use_capability")


PROFILES = {
    "explore": ChildProfile(name="explore", tools=EXPLORE_TOOLS, read_only=True),
    "research": ChildProfile(name="research", tools=RESEARCH_TOOLS, read_only=True),
    "review": ChildProfile(name="review", tools=REVIEW_TOOLS, read_only=True),
    "security_review": ChildProfile(name="security_review", tools=REVIEW_TOOLS, read_only=True),
}


PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["task"],
    "properties": {
        "task": {
            **PROMPT_FIELD,
            "description": "What the subagent should find out: the "
            "complete task (it sees nothing else of this "
            "conversation).",
        },
        "continue_from": {
            **REF,
            "description": "Continue a retryable partial, failed or "
            "cancelled run of this tool under the same "
            "reference.",
        },
    },
}


READ_ONLY_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["prompt"],
    "properties": {
        "prompt": PROMPT_FIELD,
        "description": DESCRIPTION_FIELD,
        "tools": {
            "type": "array",
            "minItems": 1,
            "maxItems": 64,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": 64},
            "description": "The read-only tools the subagent may use (names); default: "
            "every read-only tool of this session.",
        },
        "max_steps": {
            "type": "integer",
            "minimum": 1,
            "maximum": 200,
            "description": "At most this many model turns for the subagent.",
        },
    },
}


DESCRIPTIONS = {
    "explore": "Hand a question about this codebase to a read-only exploration subagent "
    "(read_file, ls, glob, grep, code_index) and get its answer with file:line "
    "citations.",
    "research": "Hand a question to a read-only research subagent that may also fetch web "
    "pages (web_fetch), and get its answer with URLs and file:line citations.",
    "review": "Have a strictly read-only subagent review the workspace's uncommitted changes "
    "(git status and git diff are handed to it) and report a verdict and findings.",
    "security_review": "Have a strictly read-only subagent review the workspace's "
    "uncommitted changes for security problems only and report threats "
    "by severity and a verdict.",
}


READ_ONLY_TASK_DESCRIPTION = (
    "Run one self-contained job in a strictly read-only subagent and wait for its answer: it "
    "can read and search but never change files, run writing commands or ask the user. "
    "Name the read-only tools it may use in tools (default: all of them). The result names "
    "a Subagent reference and the outcome."
)


PROFILE_TOOLS = (
    ToolSpec(
        runs_at="host",
        name="read_only_task",
        description=READ_ONLY_TASK_DESCRIPTION,
        schema=READ_ONLY_TASK_SCHEMA,
        execute=deferred("callgate_tasks.tools.builtin:run_read_only_task"),
        read_only=True,
        validate=deferred("callgate_tasks.tools.builtin:_validate_read_only_task"),
        available=deferred("callgate_tasks.tools.task:nesting_available"),
        groups=("tasks",),
        requires_hooks=("callgate_subagent_runner",),
    ),
    *(
        ToolSpec(
            runs_at="host",
            name=name,
            description=DESCRIPTIONS[name],
            schema=PROFILE_SCHEMA,
            execute=deferred(f"callgate_tasks.tools.builtin:run_{name}"),
            available=deferred("callgate_tasks.tools.task:nesting_available"),
            groups=("tasks",),
            requires_hooks=("callgate_subagent_runner",),
        )
        for name in PROFILES
    ),
)



# --- fleet, fleet_output ---------------------------------------------------------------------
ID = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"}


JOB_ID = {"type": "string", "pattern": "^fleet-[1-9][0-9]{0,8}$"}


ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["prompt"],
    "properties": {
        "prompt": PROMPT_FIELD,
        "description": DESCRIPTION_FIELD,
        "id": {**ID, "description": "A name for this task (default task-<n>), for depends_on."},
        "depends_on": {
            "type": "array",
            "items": ID,
            "maxItems": 64,
            "uniqueItems": True,
            "description": "Ids of tasks that must complete before this one "
            "starts; if one of them does not complete, this one "
            "is skipped.",
        },
        "read_only": {
            "type": "boolean",
            "default": False,
            "description": "A reader: changes nothing and claims no paths.",
        },
        "write_paths": {
            "type": "array",
            "maxItems": 64,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": 4096},
            "description": "Files or directories this writer may change; two "
            "writers that may run at once must not overlap. A "
            "writer without write_paths claims the whole "
            "workspace.",
        },
        "profile": {
            "type": "string",
            "minLength": 1,
            "maxLength": 64,
            "enum": sorted(PROFILES),
            "description": "Run this task as a built-in strict read-only profile (its tools and "
            "instructions; review profiles also get the workspace's change set).",
        },
        "max_steps": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "At most this many model turns for the child (the runner's limit "
            "otherwise).",
        },
        "tools": {
            "type": "array",
            "maxItems": 128,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": 128},
            "description": "The tools (names or globs) the child may use.",
        },
    },
}


FLEET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tasks"],
    "properties": {
        "tasks": {"type": "array", "minItems": 2, "maxItems": 64, "items": ITEM_SCHEMA},
        "run_in_background": {
            "type": "boolean",
            "default": False,
            "description": "Return a fleet job id at once; read the result with fleet_output.",
        },
        "fail_fast": {
            "type": "boolean",
            "default": False,
            "description": "Stop everything (cancel running children, skip the "
            "rest) at the first failure.",
        },
    },
}


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["job_id"],
    "properties": {
        "job_id": {**JOB_ID, "description": "The id a background fleet call returned."},
        "wait": {
            "type": "boolean",
            "default": False,
            "description": "Wait (up to timeout_ms) for the fleet to finish.",
        },
        "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 30000},
    },
}


FLEET_DESCRIPTION = (
    "Run 2 to 64 subagent tasks as one plan: each task has a prompt and may name an id, "
    "depends_on (ids that must complete first), read_only, or the write_paths it may change. "
    "Before anything starts the fleet is refused if ids repeat, a dependency is unknown or "
    "circular, or two writers that could run at the same time claim overlapping paths (a "
    "writer without write_paths claims the whole workspace). A failed task skips only the "
    "tasks that depend on it (fail_fast stops everything instead). The result lists every "
    "task's Subagent reference, outcome and a preview of its answer; read a full answer with "
    "read_subagent_result. run_in_background returns a job id for fleet_output."
)


OUTPUT_DESCRIPTION = (
    "Read a background fleet's progress or, once it has finished, its combined result (the "
    "same text a foreground fleet returns). wait=true waits up to timeout_ms for it to end."
)


FLEET_TOOLS = (
    ToolSpec(
        runs_at="host",
        name="fleet",
        description=FLEET_DESCRIPTION,
        schema=FLEET_SCHEMA,
        execute=deferred("callgate_tasks.tools.fleet:run_fleet"),
        validate=deferred("callgate_tasks.tools.fleet:validate"),
        available=deferred("callgate_tasks.tools.task:nesting_available"),
        groups=("tasks",),
        requires_hooks=NEEDS,
    ),
    ToolSpec(
        runs_at="host",
        name="fleet_output",
        description=OUTPUT_DESCRIPTION,
        schema=OUTPUT_SCHEMA,
        execute=deferred("callgate_tasks.tools.fleet:run_output"),
        read_only=True,
        available=deferred("callgate_tasks.tools.task:available"),
        groups=("tasks",),
        requires_hooks=NEEDS,
    ),
)
