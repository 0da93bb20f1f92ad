"""The call in flight on an MCP server, and what its server's requests are relayed to
(issue 34, item 5): the integrator's hooks (`hookspecs`), in the context of the call.

`CallRelay` is made by ``McpServers.call`` in the calling thread (it copies that thread's
context variables) and lent to the connection for the call's duration; the connection's
callbacks, on the MCP loop thread, hand the server's requests to it in a worker thread.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("callgate.capability")


class CallRelay:
    """One call's way to the integrator: ``elicit``, ``sample`` and ``log`` call the
    session's hooks in the call's context (they may block)."""

    def __init__(self, session: Any, server: str,
                 context: contextvars.Context | None = None) -> None:
        self.session = session
        self.server = server
        self._context = context if context is not None else contextvars.copy_context()

    def _call(self, hook: str, **kwargs: Any) -> Any:
        caller: Callable[..., Any] = getattr(self.session.host.pm.hook, hook)
        try:
            # a copy per request: one context may be entered by one thread at a time
            return self._context.copy().run(caller, session=self.session,
                                            server=self.server, **kwargs)
        except Exception:  # a failing integrator refuses; the server and the call go on
            log.exception("the %s hook failed for MCP server %s", hook, self.server)
            return None

    def elicit(self, request: dict[str, Any]) -> dict[str, Any] | None:
        answer = self._call("callgate_mcp_elicit", request=request)
        return answer if isinstance(answer, dict) else None

    def sample(self, request: dict[str, Any]) -> dict[str, Any] | None:
        answer = self._call("callgate_mcp_sample", request=request)
        return answer if isinstance(answer, dict) else None

    def log(self, message: dict[str, Any]) -> None:
        self._call("callgate_mcp_log", message=message)


def can_sample(session: Any) -> bool:
    """Whether some plugin implements `callgate_mcp_sample` (then sampling is declared)."""
    hook = getattr(session.host.pm.hook, "callgate_mcp_sample", None)
    return hook is not None and bool(hook.get_hookimpls())


__all__ = ["CallRelay", "can_sample"]
