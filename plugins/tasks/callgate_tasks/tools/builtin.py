"""Built-in subagent profiles and their tools: ``read_only_task``, ``explore``,
``research``, ``review``, ``security_review`` (full-boot-surface.md "subagents").

Each runs one child through the integrator's runner (or ``replay --subagents``) in a
session opened with a `callgate.ChildProfile` that the pipeline enforces:

| tool | the child may use | strict read-only |
| --- | --- | --- |
| explore | read_file, ls, glob, grep, code_index | yes |
| research | the explore set + web_fetch | yes |
| review, security_review | the explore set + bash (read-only lines) + use_capability | yes |
| read_only_task | the model's ``tools[]`` (read-only ones), else every read-only tool | yes |

The child's prompt is the profile's instructions, then the task; a review child also
gets the workspace's change set (``git status`` and ``git diff HEAD``). The four
profile tools take ``task`` and ``continue_from``; their contract flag is not read-only
(a conservative hint for parallel dispatch), while ``read_only_task`` is.
"""

from __future__ import annotations

from typing import Any

import anyio
from callgate import ChildProfile, ToolContext, ToolResult, ToolSpec, Violation

from .. import _text
from .._book import SUBAGENTS
from .._changes import change_set
from .._run import Job
from .task import (
    DESCRIPTION_FIELD,
    PROMPT_FIELD,
    REF,
    _children,
    _meta,
    _runner,
    depth_profile,
    nesting_available,
)

EXPLORE_TOOLS = ("read_file", "ls", "glob", "grep", "code_index")
RESEARCH_TOOLS = (*EXPLORE_TOOLS, "web_fetch")
REVIEW_TOOLS = (*EXPLORE_TOOLS, "bash", "use_capability")

PROMPTS = {
    "explore": (
        "You are an exploration subagent with read-only tools. Cast a wide net first (glob, "
        "grep, ls), then read the key files. Cite file:line for every claim, stop as soon as "
        'the question is answered, and back every negative claim ("X is never used") with '
        "the search that shows it."
    ),
    "research": (
        "You are a research subagent with read-only tools and web_fetch. Fetch the canonical "
        "documentation, then verify it against the code here. Use about ten calls. Cite URLs "
        "and file:line for every claim."
    ),
    "review": (
        "You are a code-review subagent. You are strictly read-only: bash runs only read-only "
        "commands (git status, git diff, git log, grep, ...). Review the change set below. "
        "Order findings by correctness, then security, then hidden behaviour changes, then "
        "tests. Start with a one-line verdict, then one bullet per finding with file:line."
    ),
    "security_review": (
        "You are a security-review subagent. You are strictly read-only: bash runs only "
        "read-only commands. Review the change set below for security problems only (no style "
        "or performance findings). List threats as CRITICAL, HIGH or MEDIUM with file:line "
        "and why; end with one verdict: no security issues found, minor concerns, or blocking "
        "issues."
    ),
}

PROFILES = {
    "explore": ChildProfile(name="explore", tools=EXPLORE_TOOLS, read_only=True),
    "research": ChildProfile(name="research", tools=RESEARCH_TOOLS, read_only=True),
    "review": ChildProfile(name="review", tools=REVIEW_TOOLS, read_only=True),
    "security_review": ChildProfile(name="security_review", tools=REVIEW_TOOLS, read_only=True),
}
READS_CHANGES = frozenset({"review", "security_review"})

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


def _result(record: Any, max_chars: int) -> ToolResult:
    text = _text.one_child(record, max_chars)
    meta = _meta([record])
    if record.status == "cancelled":
        return ToolResult.failure("cancelled", text, "cancelled", meta)
    if record.status == "failed":
        return ToolResult.failure("tool_error", text, record.error_code or "subagent_failed", meta)
    return ToolResult.ok(text, meta)


def profile_tool(name: str) -> ToolSpec:
    """The tool that runs built-in profile ``name``."""
    profile = PROFILES[name]

    async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        runner = _runner(ctx)
        book = ctx.session.extension(SUBAGENTS)
        description = f"{name}: {args['task'][:100]}"
        continuation = None
        child_profile = depth_profile(ctx.session, profile)
        if "continue_from" in args:
            continuation = book.continuable(args["continue_from"], tool=name)
            child_profile = book.profile_of(continuation) or child_profile
        prompt = f"{PROMPTS[name]}\n\nTask:\n{args['task']}"
        if name in READS_CHANGES:
            changes = await anyio.to_thread.run_sync(change_set, ctx.session)
            prompt += "\n\nChange set:\n" + (
                changes or "(not a git work tree: find the changes to review yourself)"
            )
        record = (
            book.restart(continuation, description)
            if continuation is not None
            else book.start(description, tool=name, profile=child_profile)
        )
        [outcome] = await _children(ctx, runner).run_all(
            [Job(record, prompt, continuation, child_profile)]
        )
        return _result(book.finish(record, outcome), ctx.session.max_chars)

    return ToolSpec(
        name=name,
        description=DESCRIPTIONS[name],
        schema=PROFILE_SCHEMA,
        execute=run,
        available=nesting_available,
        groups=("tasks",),
        requires_hooks=("callgate_subagent_runner",),
    )


def _read_only_tools(ctx: ToolContext, names: list[str]) -> list[Violation]:
    out = []
    for i, name in enumerate(names):
        spec = ctx.session.tool(name)
        if spec is None:
            out.append(
                Violation(f"/tools/{i}", "enum", f'a tool of this session ("{name}" is not one)')
            )
        elif spec.read_only is not True:
            out.append(
                Violation(
                    f"/tools/{i}",
                    "enum",
                    f'a read-only tool ("{name}" is not '
                    "read-only; a read-only subagent may use only those)",
                )
            )
    return out


def _validate_read_only_task(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    return _read_only_tools(ctx, args.get("tools", []))


async def run_read_only_task(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    runner = _runner(ctx)
    book = ctx.session.extension(SUBAGENTS)
    tools = tuple(args["tools"]) if "tools" in args else None
    profile = depth_profile(
        ctx.session, ChildProfile(name="read_only_task", tools=tools, read_only=True)
    )
    record = book.start(args.get("description") or args["prompt"][:100],
                        tool="read_only_task", profile=profile)
    [outcome] = await _children(ctx, runner).run_all(
        [Job(record, args["prompt"], None, profile, args.get("max_steps"))]
    )
    return _result(book.finish(record, outcome), ctx.session.max_chars)


TOOLS = (
    ToolSpec(
        name="read_only_task",
        description=READ_ONLY_TASK_DESCRIPTION,
        schema=READ_ONLY_TASK_SCHEMA,
        execute=run_read_only_task,
        read_only=True,
        validate=_validate_read_only_task,
        available=nesting_available,
        groups=("tasks",),
        requires_hooks=("callgate_subagent_runner",),
    ),
    *(profile_tool(name) for name in PROFILES),
)
