"""What the workflow plugin needs from the integrator to offer ``compress``.

Implement both in an in-process plugin (``@callgate.hookimpl``); ``compress``
exists in a session only when both return a value for it. They are asked at
session open and again when ``compress`` runs.
"""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_session_conversation(session):
    """Return the session's `Conversation` (its messages, the active turn, and where to
    record a compression), or ``None`` when the session has none."""


@hookspec(firstresult=True)
def callgate_session_summarizer(session):
    """Return a `Summarizer` (``async summarize(messages, focus) -> str``) for the session,
    or ``None``."""
