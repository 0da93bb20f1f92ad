"""OpenTelemetry: every tool call an ``execute_tool {name}`` span (``callgate[otel]``).

The span follows the GenAI semantic conventions for tool execution:
``gen_ai.operation.name = "execute_tool"``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.type = "function"``, ``gen_ai.conversation.id``
(the session id), and ``error.type`` (the error kind) with an error status when the
call was refused or failed. The pipeline's stages are its events: ``validation``,
``permission`` (the decision and who made it), ``gate`` (the host gate's verdict on the
paths the tool mutates) and ``result``. The span is a child of whatever span is current
where the batch runs (the integrator's ``chat`` span, say).

Nothing here imports OpenTelemetry unless the application already has: a session traces
only when ``opentelemetry.trace`` is imported and a tracer provider is set (an SDK) when
the session opens. Without that, the pipeline pays one ``None`` check per call.
"""

from __future__ import annotations

import sys
from typing import Any

from .._model import VERSION
from .._model.values import ToolResult

TRACER_NAME = "callgate"


def tracer() -> Any | None:
    """The tracer sessions opened now use, or ``None`` (no OpenTelemetry, or no provider)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None  # nothing set: every span would be dropped
    return provider.get_tracer(TRACER_NAME, VERSION)


def start(tracer: Any, session_id: str, call_id: str, name: Any) -> Any:
    label = name if isinstance(name, str) else repr(name)
    return tracer.start_span(
        f"execute_tool {label}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": label,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": session_id,
        },
    )


def end(
    span: Any,
    result: ToolResult,
    *,
    tool: str | None,
    permission: str | None,
    decided_by: str | None,
) -> None:
    """The call's outcome on its span, which ends."""
    from opentelemetry.trace import Status, StatusCode

    error = result.error
    span.add_event(
        "result", {"outcome": error.kind if error else "ok", "is_error": result.is_error}
    )
    if tool is not None:
        span.set_attribute("callgate.tool", tool)
    if permission is not None:
        span.set_attribute("callgate.permission", permission)
    if decided_by is not None:
        span.set_attribute("callgate.decided_by", decided_by)
    if error is not None:
        span.set_attribute("error.type", error.kind)
        span.set_attribute("callgate.signature", error.signature)
        span.set_status(Status(StatusCode.ERROR, error.message[:200]))
    span.end()
