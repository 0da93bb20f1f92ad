"""Plan mode over MCP: ``callgate serve --mode plan`` and the ``exit_plan_mode`` tool.

In plan mode the session runs only read-only calls (host.md §6). Leaving it is
the user's decision, not the model's, so the server works the way Claude
Code's plan mode does: the model presents its plan by calling
``exit_plan_mode``, the server asks the user behind the MCP client to approve
it (an elicitation form, in either protocol era), and only an approval ends
plan mode. A refusal keeps the session in plan mode; a client that cannot
elicit gets ``[permissions] ask_without_approver`` (default: refused, with a
message saying how to get out).

The tool belongs to the server, not to the host's registry: it is listed only
when the server starts in plan mode, and it stays listed (with an answer that
says so) after the plan was approved, so the tool list never changes mid-session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from callgate import ToolResult

from ._approval import REQUEST_CANCELLED, TIMED_OUT, answer_approves
from ._render import clip_lines, visible

EXIT_PLAN_TOOL = "exit_plan_mode"
PLAN_MAX_CHARS = 6000
#: A plan is shown with at most this many lines (its head and tail).
PLAN_MAX_LINES = 30

DESCRIPTION = (
    "Present your plan to the user and ask to leave plan mode. While the session is in plan "
    "mode only read-only tools run; call this once your plan is ready, with the plan itself. "
    "The user approves or refuses it in the client: after an approval, tools that change "
    "files or run commands work again; after a refusal, keep planning and revise the plan.")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"plan": {"type": "string", "minLength": 1, "maxLength": 20000,
                            "description": "The plan, in Markdown: what you will change and "
                                           "how you will check it."}},
    "required": ["plan"],
    "additionalProperties": False,
}

#: The form the user answers: one boolean, ticked, so "accept" approves.
APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve this plan",
                               "description": "Untick (or decline) to stay in plan mode.",
                               "default": True}},
    "required": ["approve"],
}


def tool_definition() -> dict[str, Any]:
    """``exit_plan_mode`` in the shape of the ``mcp`` rendering of a host tool."""
    return {"name": EXIT_PLAN_TOOL, "description": DESCRIPTION, "inputSchema": SCHEMA,
            "annotations": {"title": "Exit plan mode", "readOnlyHint": False,
                            "destructiveHint": False, "idempotentHint": False,
                            "openWorldHint": False}}


def _clip(text: str, limit: int = PLAN_MAX_CHARS) -> str:
    """``text`` cut in the middle, keeping its head and tail, with a marker saying so."""
    if len(text) <= limit:
        return text
    half = (limit - 40) // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters not shown …]\n{text[-half:]}"


def approval_message(plan: str) -> str:
    """What the user reads: the plan with its lines kept, but nothing hidden (`visible`) and
    at most `PLAN_MAX_LINES` lines, its head and its tail."""
    shown = clip_lines(_clip(visible(plan, keep_newlines=True)), PLAN_MAX_LINES)
    return ("The model asks to leave plan mode and start making changes. Its plan:\n\n"
            f"{shown}\n\nApprove the plan?")


def plan_argument(arguments: Any) -> str | None:
    """The ``plan`` argument when the call is well formed, else ``None``."""
    if not isinstance(arguments, Mapping) or set(arguments) != {"plan"}:
        return None
    plan = arguments["plan"]
    if not isinstance(plan, str) or not plan.strip() or len(plan) > 20000:
        return None
    return plan


def invalid_plan_call() -> ToolResult:
    return ToolResult.failure(
        "invalid_arguments", f"argument validation failed for {EXIT_PLAN_TOOL}: not executed\n"
        "- /plan: required; expected a non-empty plan of at most 20000 characters, and no "
        "other property\nsignature: argument_validation:exit_plan_mode:plan",
        "argument_validation:exit_plan_mode:plan", {"executed": False})


def not_in_plan_mode() -> ToolResult:
    return ToolResult.ok("The session is not in plan mode (the plan was already approved, or "
                         "it never was in plan mode): nothing changed; go ahead.")


def approved() -> ToolResult:
    return ToolResult.ok("The user approved the plan. Plan mode has ended: tools that change "
                         "files or run commands are allowed again (permission rules still "
                         "apply). Carry out the plan.")


def refused(why: str) -> ToolResult:
    return ToolResult.failure("blocked", f"blocked: the plan was not approved ({why}); the "
                              "session stays in plan mode. Revise the plan with the user's "
                              "feedback, or ask what they want changed.",
                              "plan:not_approved", {"executed": False})


def no_approver() -> ToolResult:
    return ToolResult.failure(
        "blocked", "blocked: this MCP client cannot show an approval form (it declared no "
        "elicitation support), so the plan cannot be approved here; the session stays in plan "
        "mode. Tell the user the plan; they can restart `callgate serve` without --mode plan "
        "to allow changes.", "plan:no_approver", {"executed": False})


def decide(answer: tuple[str, Mapping[str, Any] | None] | None) -> str | None:
    """``None`` when the answer approves the plan, else why not."""
    if answer is None:
        return "the client did not answer the approval request"
    action, content = answer
    if action == "accept":
        verdict = answer_approves(content, APPROVE_SCHEMA, "approve")
        if verdict is True:
            return None
        return "the user unticked the approval" if verdict is False else \
            "the client's answer did not fit the approval form (only approve = true approves)"
    if action == TIMED_OUT:
        return "nobody answered the approval request in time ([serve] approval_timeout_s)"
    if action == REQUEST_CANCELLED:
        return "the client cancelled the request before the user answered"
    if action == "decline":
        return "the user declined it"
    return "the user dismissed the approval request"


__all__ = ["APPROVE_SCHEMA", "EXIT_PLAN_TOOL", "approval_message", "decide", "tool_definition"]
