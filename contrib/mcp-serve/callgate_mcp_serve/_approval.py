"""Approving ``ask`` permissions through MCP elicitation (host.md §6).

The host asks its approver (the ``callgate_ask_permission`` hook) when a rule
or ``[permissions] mode = "ask"`` wants a human decision. Over MCP that human
sits behind the client, so the approver sends an elicitation form to the client
that made the ``tools/call`` and turns the answer into a `Decision`. Which
client that is, is carried by a context variable the server sets while it runs
the call (`ApprovalChannel`). When there is no channel (the client declared no
elicitation support, or the call did not come over MCP) the approver does not
answer, and the host applies ``[permissions] ask_without_approver``.

This module does not import the ``mcp`` SDK: the channel is a plain callable.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import attrs
from callgate import Decision, hookimpl

log = logging.getLogger("callgate.mcp_serve")

#: The key of the approval request inside an MCP ``InputRequiredResult``.
APPROVAL_KEY = "callgate-approval"

#: The form the client shows: one boolean, already ticked, so "accept" approves.
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allow": {
            "type": "boolean",
            "title": "Allow this call",
            "description": "Untick (or decline) to refuse; the model is told it was not approved.",
            "default": True,
        },
    },
    "required": ["allow"],
}

PREVIEW_MAX_CHARS = 4000
ARGUMENTS_MAX_CHARS = 2000
#: A run of this many blank characters or more is shown as a count, never as blank space.
_BLANK_RUN = re.compile(r"[ \t]{16,}")
#: Characters that draw nothing or reorder what is drawn (bidi overrides, zero-width).
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        "\u2066-\u206f\ufeff]")

#: ``elicit(message, schema)`` returns the client's answer as ``(action, content)``,
#: or ``None`` when the client could not be asked (an error, a closed connection).
Elicit = Callable[[str, dict[str, Any]], Awaitable["tuple[str, Mapping[str, Any] | None] | None"]]


@attrs.frozen
class ApprovalChannel:
    """How to reach the user behind the MCP request a call is running for."""

    session: Any
    elicit: Elicit | None


current_channel: ContextVar[ApprovalChannel | None] = ContextVar(
    "callgate_mcp_serve_channel", default=None)


def visible(text: str) -> str:
    """``text`` with long blank runs counted and invisible characters escaped."""
    text = _BLANK_RUN.sub(lambda m: f"⟨{len(m.group(0))} blanks⟩", text)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def clip_middle(text: str, limit: int) -> str:
    """``text`` whole, or its head and tail around a marker saying how much is not shown.

    The tail is where an appended payload sits (``git status`` + spaces +
    ``; curl … | sh``), so both ends are always shown.
    """
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2)
    head = keep * 3 // 5
    tail = keep - head
    hidden = len(text) - head - tail
    return f"{text[:head]} …⟨{hidden:,} characters not shown⟩… {text[len(text) - tail:]}"


def approval_message(call: Any, preview: Any) -> str:
    """What the client shows its user: the tool, its arguments and the change it would make."""
    try:
        shown = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = repr(call.arguments)
    lines = [f"callgate asks for approval: run {call.name}?",
             f"Arguments: {clip_middle(visible(shown), ARGUMENTS_MAX_CHARS)}"]
    if preview is not None:
        lines += ["Change it would make:",
                  clip_middle(visible(str(preview)), PREVIEW_MAX_CHARS)]
    return "\n".join(lines)


def decision_from_answer(action: str, content: Mapping[str, Any] | None) -> Decision:
    """Map an elicitation answer onto allow / deny, with a reason the model reads."""
    if action == "accept":
        if (content or {}).get("allow", True) is False:
            return Decision("deny", reason="the user refused it in the MCP client")
        return Decision("allow", reason="approved in the MCP client")
    if action == "decline":
        return Decision("deny", reason="the user declined it in the MCP client")
    return Decision("deny", reason="the user dismissed the approval request in the MCP client")


def _belongs_to(session: Any, root: Any) -> bool:
    """``session`` is ``root`` or one of its children (a subagent's calls ask the same user)."""
    while session is not None:
        if session is root:
            return True
        session = getattr(session, "parent", None)
    return False


class ElicitationApprover:
    """The ``callgate_ask_permission`` hook of ``callgate serve``.

    Registered in process when the server boots its host. It answers only for
    calls that run inside an MCP request whose client can elicit; otherwise it
    returns ``None`` so that the host's configured fallback decides.
    """

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Awaitable[Decision | None] | None:
        channel = current_channel.get()
        if channel is None or channel.elicit is None or not _belongs_to(session, channel.session):
            return None
        return self._ask(channel.elicit, call, preview)

    async def _ask(self, elicit: Elicit, call: Any, preview: Any) -> Decision | None:
        try:
            answer = await elicit(approval_message(call, preview), APPROVAL_SCHEMA)
        except Exception as exc:  # the client failed to answer: fall back, never crash the call
            log.warning("elicitation for %s failed: %s", call.name, exc)
            return None
        if answer is None:
            return None
        action, content = answer
        return decision_from_answer(action, content)


__all__ = ["APPROVAL_KEY", "APPROVAL_SCHEMA", "ApprovalChannel", "ElicitationApprover",
           "approval_message", "clip_middle", "current_channel", "decision_from_answer",
           "visible"]
