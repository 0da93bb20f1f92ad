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
from callgate import ChildProfile, ToolContext, ToolResult, Violation

from .. import _text
from .._changes import change_set
from .._keys import SUBAGENTS
from .._run import Job
from .specs import PROFILES
from .task import (
    _children,
    _meta,
    _runner,
    depth_profile,
)

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

READS_CHANGES = frozenset({"review", "security_review"})

def _result(record: Any, max_chars: int) -> ToolResult:
    text = _text.one_child(record, max_chars)
    meta = _meta([record])
    if record.status == "cancelled":
        return ToolResult.failure("cancelled", text, "cancelled", meta)
    if record.status == "failed":
        return ToolResult.failure("tool_error", text, record.error_code or "subagent_failed", meta)
    return ToolResult.ok(text, meta)


def profile_runner(name: str) -> Any:
    """The code of the tool that runs built-in profile ``name`` (its spec: `specs`)."""
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

    run.__name__ = f"run_{name}"
    return run


#: each profile tool's code, named by its spec (`callgate.deferred`)
run_explore = profile_runner("explore")
run_research = profile_runner("research")
run_review = profile_runner("review")
run_security_review = profile_runner("security_review")


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
