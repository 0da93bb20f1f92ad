"""What the capability plugin needs from the integrator to be a full host of the MCP servers
it proxies (issue 34, item 5): someone to relay their requests to.

A server may, while one of the session's calls to it runs, ask the user for input
(``elicitation/create``) or ask a model to write something (``sampling/createMessage``),
and it may log (``notifications/message``). callgate declares elicitation (form and URL) and
roots to every server it starts, and sampling when some plugin implements
`callgate_mcp_sample`. Requests and results are plain JSON-shaped dicts (the MCP wire
shapes: ``ElicitRequestParams`` / ``ElicitResult``, ``CreateMessageRequestParams`` /
``CreateMessageResult``, ``LoggingMessageNotificationParams``), so an implementation needs
nothing from this package.

The hooks are called in a worker thread, in the context of the call the server answers (an
integrator's context variables are those of the call: ``callgate serve`` finds the MCP
request the call belongs to that way), and may block until they have an answer. A request
that arrives while no call of the session runs on that server has no user behind it and is
refused without asking.
"""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_mcp_elicit(session, server, request):
    """MCP server ``server`` asks the user of ``session`` for input while a call runs.

    ``request`` is the ``elicitation/create`` params: ``{"mode": "form", "message",
    "requestedSchema"}`` or ``{"mode": "url", "message", "url", "elicitationId"}``. Return
    the ``ElicitResult`` as a dict (``{"action": "accept", "content": {...}}``, or
    ``"decline"`` / ``"cancel"``), or ``None`` when no one can be asked: the server is then
    refused with an error that says so. Show the user which server asks.
    """


@hookspec(firstresult=True)
def callgate_mcp_sample(session, server, request):
    """MCP server ``server`` asks for a model's answer (``sampling/createMessage``; ``request``
    its params: ``messages``, ``maxTokens``, ``systemPrompt``, ...). Return the
    ``CreateMessageResult`` as a dict (``{"role": "assistant", "content": {"type": "text",
    "text": ...}, "model": ..., "stopReason": ...}``), or ``None`` to refuse. Without an
    implementation callgate does not declare sampling to the servers it starts.
    """


@hookspec
def callgate_mcp_log(session, server, message):
    """MCP server ``server`` logged ``message`` (``{"level", "logger", "data"}``). callgate
    has written it to the server's log file (``<session scratch>/mcp/<server>.stderr.log``)
    already; an implementation may show or forward it. Called for messages outside a call
    too (then outside any call's context)."""
