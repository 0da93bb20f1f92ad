"""Approving ``ask`` permissions through MCP elicitation (host.md §6).

The host asks its approver (the ``callgate_ask_permission`` hook,
`plugin.ElicitationApprover`) when a rule or ``[permissions] mode = "ask"`` wants a human
decision. Over MCP that human sits behind the client, so the approver sends an elicitation
form to the client that made the ``tools/call`` and turns the answer into a `Decision`
(`ask_approval`). Which client that is, is carried by a context variable the server sets
while it runs the call (`ApprovalChannel`). When there is no channel (the client declared no
elicitation support, or the call did not come over MCP) the approver does not
answer, and the host applies ``[permissions] ask_without_approver``.

This module does not import the ``mcp`` SDK: the channel is a plain callable.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import attrs
from callgate import Decision

from ._render import approval_message, clip_middle, visible

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

#: The answers the server makes up itself: nobody answered within ``[serve]
#: approval_timeout_s``; the client cancelled the ``tools/call`` while it was asked.
TIMED_OUT, REQUEST_CANCELLED = "callgate/timed-out", "callgate/request-cancelled"

#: ``elicit(message, schema)`` returns the client's answer as ``(action, content)``,
#: or ``None`` when the client could not be asked (an error, a closed connection).
Elicit = Callable[[str, dict[str, Any]], Awaitable["tuple[str, Mapping[str, Any] | None] | None"]]


@attrs.frozen
class ApprovalChannel:
    """How to reach the user behind the MCP request a call is running for: ``elicit`` asks
    an approval; ``relay`` (a `_relay.ClientRelay`) carries what a proxied MCP server asks
    while the call runs, and log messages, to the same client."""

    session: Any
    elicit: Elicit | None
    relay: Any = None


current_channel: ContextVar[ApprovalChannel | None] = ContextVar(
    "callgate_mcp_serve_channel", default=None)


def answer_approves(content: Mapping[str, Any] | None, schema: Mapping[str, Any],
                    key: str) -> bool | None:
    """``True`` when an ``accept``'s content is valid against the form that was sent and its
    ``key`` is the boolean ``true``; ``False`` for a valid refusal; ``None`` when the content
    does not fit the form (``{"allow": "false"}``, ``{"allow": 0}``, ``{}``, nothing)."""
    if not isinstance(content, Mapping):
        return None
    import jsonschema  # on the first answer: a cold `callgate tools` loads this module

    try:
        jsonschema.validate(dict(content), dict(schema))
    except jsonschema.ValidationError:
        return None
    value = content.get(key)
    return value if isinstance(value, bool) else None


def decision_from_answer(action: str, content: Mapping[str, Any] | None) -> Decision:
    """Map an elicitation answer onto allow / deny, with a reason the model reads.

    Only an ``accept`` whose content fits `APPROVAL_SCHEMA` with ``allow`` the boolean
    ``true`` approves; every other answer refuses.
    """
    if action == "accept":
        verdict = answer_approves(content, APPROVAL_SCHEMA, "allow")
        if verdict is True:
            return Decision("allow", reason="approved in the MCP client")
        if verdict is False:
            return Decision("deny", reason="the user refused it in the MCP client")
        return Decision("deny", reason="the MCP client's answer did not fit the approval form "
                                       "(only allow = true approves)")
    if action == "decline":
        return Decision("deny", reason="the user declined it in the MCP client")
    if action == TIMED_OUT:
        return Decision("deny", reason="nobody answered the approval request in time "
                                       "([serve] approval_timeout_s)")
    if action == REQUEST_CANCELLED:
        return Decision("deny", reason="the client cancelled the request before the user "
                                       "answered")
    return Decision("deny", reason="the user dismissed the approval request in the MCP client")


def belongs_to(session: Any, root: Any) -> bool:
    """``session`` is ``root`` or one of its children (a subagent's calls ask the same user)."""
    while session is not None:
        if session is root:
            return True
        session = getattr(session, "parent", None)
    return False


async def ask_approval(elicit: Elicit, call: Any, tool: Any, session: Any,
                       preview: Any) -> Decision | None:
    """Ask the user behind the MCP request for an approval of ``call``; ``None`` when the
    client could not be asked (the host's fallback then decides)."""
    try:
        # While the user decides, the session's other requests run (the approval is
        # bound to the file versions it shows; the gate refuses a stale one).
        async with session.yield_turn():
            answer = await elicit(approval_message(call, preview, tool), APPROVAL_SCHEMA)
    except Exception as exc:  # the client failed to answer: fall back, never crash the call
        log.warning("elicitation for %s failed: %s", call.name, exc)
        return None
    if answer is None:
        return None
    action, content = answer
    return decision_from_answer(action, content)


__all__ = ["APPROVAL_KEY", "APPROVAL_SCHEMA", "REQUEST_CANCELLED", "TIMED_OUT",
           "ApprovalChannel", "Elicit",
           "answer_approves", "approval_message", "ask_approval", "belongs_to", "clip_middle",
           "current_channel", "decision_from_answer", "visible"]
