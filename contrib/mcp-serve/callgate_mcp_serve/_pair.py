"""A planner/executor pair per MCP session: ``callgate serve --pair`` (issue 36.12).

Each MCP session is a `callgate.host.SessionPair`. The client's model first works as the
**planner**: plan mode for its whole life under the ``planner`` profile (read-only calls,
MCP tools that are not destructive). When its plan is ready it calls ``exit_plan_mode``
with the plan, as in ``serve --mode plan`` and Claude Code's plan mode; the server asks
the human behind the client to approve it with an elicitation form (``elicitation/create``,
which the MCP specification has the client show to its user; on a 2026-07-28 connection the
same form as an input request). Only the user's approval hands over: the server calls
``pair.approve()`` (the executor leaves plan mode; each side is told with its next result,
exactly as the Python API's pair), records the approved plan in the executor's session, and
from then on every call of the connection runs in the **executor** session.

The approval never comes from the model: a declined, unticked, dismissed or unanswered
form keeps the planner (nothing executed, the planner told why), and a client that
declared no elicitation support gets an error at the handover (nothing executed) whatever
``[permissions] ask_without_approver`` says: a pair without a human to approve it never
hands over.

The executor is a new session with its own observation ledger: the approved result tells
the model to read a file again before it edits it. A pair is not joined by name and not
reopened after a restart (``--session`` is refused with ``--pair``; over ``--http`` a
restarted server answers the old session id 404 and the client opens a new pair).
"""

from __future__ import annotations

from typing import Any

from callgate import ToolResult

from ._plan import EXIT_PLAN_TOOL, PLAN_MAX_LINES, SCHEMA, _clip
from ._render import clip_lines, visible

INSTRUCTIONS = (
    " This MCP session is a planner/executor pair. You start as the planner: only read-only "
    "tools run. Explore, then hand your plan over with exit_plan_mode; once the user "
    "approves it, your calls run in the executor session, which may change files and run "
    "commands.")

DESCRIPTION = (
    "Hand your plan to the executor. You are the planner of a planner/executor pair: only "
    "read-only tools run. Call this once your plan is ready, with the plan itself; the user "
    "approves or refuses it in the client. After an approval your calls run in the executor "
    "session, which may change files and run commands (read a file again before editing it: "
    "the executor has not seen it); after a refusal, keep planning and revise the plan.")


def tool_definition() -> dict[str, Any]:
    """The pair's ``exit_plan_mode``, in the shape of the ``mcp`` rendering of a host tool."""
    return {"name": EXIT_PLAN_TOOL, "description": DESCRIPTION, "inputSchema": SCHEMA,
            "annotations": {"title": "Hand the plan to the executor", "readOnlyHint": False,
                            "destructiveHint": False, "idempotentHint": False,
                            "openWorldHint": False}}


def approval_message(plan: str) -> str:
    """What the user reads: the plan (nothing hidden, at most `PLAN_MAX_LINES` lines)."""
    shown = clip_lines(_clip(visible(plan, keep_newlines=True)), PLAN_MAX_LINES)
    return ("The planner hands this plan to the executor, which may change files and run "
            f"commands once you approve it:\n\n{shown}\n\nApprove the plan?")


def executor_message(plan: str) -> str:
    """The approved plan as the executor's session records it."""
    return f"[approved plan, handed over by the planner]\n{plan}"


def approved() -> ToolResult:
    return ToolResult.ok(
        "The user approved the plan. From now on your calls run in the executor session: "
        "tools that change files or run commands are allowed (permission rules still apply). "
        "The executor has not read any file yet: read a file again before you edit it. "
        "Carry out the plan.")


def already_handed_over() -> ToolResult:
    return ToolResult.ok("The plan was already approved and handed over: your calls run in "
                         "the executor session. Nothing changed; carry out the plan.")


def refused(why: str) -> ToolResult:
    return ToolResult.failure(
        "blocked", f"blocked: the plan was not approved ({why}); nothing was handed over and "
        "nothing executed: you are still the planner (read-only). Revise the plan with the "
        "user's feedback, or ask what they want changed.", "pair:not_approved",
        {"executed": False})


def no_elicitation() -> ToolResult:
    return ToolResult.failure(
        "blocked", "blocked: this MCP client declared no elicitation support, so the user "
        "cannot approve the plan here, and a plan is never approved without them; nothing was "
        "handed over and nothing executed: you are still the planner (read-only). Tell the "
        "user the plan; to carry it out they need a client that supports elicitation, or "
        "`callgate serve` without --pair.", "pair:no_elicitation", {"executed": False})


__all__ = ["DESCRIPTION", "INSTRUCTIONS", "approval_message", "approved", "no_elicitation",
           "refused", "tool_definition"]
