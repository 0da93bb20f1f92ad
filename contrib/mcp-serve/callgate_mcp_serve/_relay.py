"""Relaying what a proxied MCP server asks to the client of the call it answers (issue 34,
item 5), and callgate's log messages (item 6).

While a ``tools/call`` runs, `CallgateMCP` puts a `ClientRelay` for that request in the
call's `ApprovalChannel`. The capability plugin's hooks (``callgate_mcp_elicit``,
``callgate_mcp_sample``, ``callgate_mcp_log``) run in a worker thread in the call's context,
so `ElicitationApprover` finds the relay there and hands the request to the serving loop:

- form elicitation goes to the client bound to the calling request (``elicitation/create``
  with its ``related_request_id``; on a 2026-07-28 connection an ``InputRequiredResult``
  the client answers by retrying), with the server's name in front of its message; a
  client that declared no form elicitation is not asked (the server gets an error);
- URL elicitation likewise, to a client that declared it;
- sampling goes to a client that declared ``sampling``, else it is refused;
- log messages go to the client as ``notifications/message`` (above the level it set with
  ``logging/setLevel``; the logger names the server: ``mcp:<server>[/<its logger>]``).

Everything is bounded by ``[serve] approval_timeout_s`` and ends when the request does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread

from ._approval import REQUEST_CANCELLED, TIMED_OUT
from ._render import visible

if TYPE_CHECKING:
    from ._server import CallgateMCP

log = logging.getLogger("callgate.mcp_serve")

#: MCP's log levels, least severe first (RFC 5424)
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: Python's level names, as MCP's
PY_LEVELS = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "ERROR": "error",
             "CRITICAL": "critical"}


def at_least(level: str, floor: str) -> bool:
    """Whether ``level`` is as severe as ``floor`` or more."""
    try:
        return LEVELS.index(level) >= LEVELS.index(floor)
    except ValueError:
        return True


def _shown(schema: Any) -> Any:
    """A form's schema with every ``title`` and ``description`` the user reads made visible
    (`visible`): a server's field labels cannot hide or redraw text either."""
    if isinstance(schema, dict):
        return {key: visible(value) if key in ("title", "description") and
                isinstance(value, str) else _shown(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_shown(item) for item in schema]
    return schema


class ClientRelay:
    """One MCP request's client, reachable from any thread while the request runs."""

    def __init__(self, app: CallgateMCP, ctx: Any, elicit: Any, running: Any = None) -> None:
        self.app = app
        self.ctx = ctx
        #: the call (its ``_Running``): a 2026-07-28 client is asked through its retry
        self.running = running
        #: the request's form elicitation (``_elicit_for`` without lending the turn), or None
        self.elicit = elicit
        self.loop, self.token = app.loop_token()

    # --- blocking: from a worker thread ---------------------------------------------------

    def _run(self, fn: Any, *args: Any) -> Any:
        try:
            return anyio.from_thread.run(fn, *args, token=self.token)
        except RuntimeError:  # the loop is gone: the connection ended
            return None

    def elicit_for(self, server: str, request: dict[str, Any]) -> dict[str, Any] | None:
        """A proxied server's ``elicitation/create``, asked of this request's client."""
        mode = request.get("mode", "form")
        message = f'MCP server "{visible(server)}" (run by callgate) asks:\n' + \
            visible(str(request.get("message", "")), keep_newlines=True)
        if mode == "url":
            if not self._can("url"):
                return None
            return self._run(self._elicit_url, message, request)
        if self.elicit is None:
            return None
        schema = request.get("requestedSchema")
        if not isinstance(schema, dict):
            return None
        answer = self._run(self.elicit, message, _shown(schema))
        if answer is None:
            return None
        action, content = answer
        if action in (TIMED_OUT, REQUEST_CANCELLED) or action not in ("accept", "decline",
                                                                      "cancel"):
            return {"action": "cancel"}
        out: dict[str, Any] = {"action": action}
        if action == "accept" and content is not None:
            out["content"] = dict(content)
        return out

    def _can(self, what: str) -> bool:
        caps = self.ctx.session.client_capabilities
        if what == "url":
            return caps is not None and caps.elicitation is not None and \
                caps.elicitation.url is not None
        return caps is not None and getattr(caps, what, None) is not None

    async def _ask(self, request: Any, kind: Any) -> Any:
        """``request`` (an elicitation or a sampling request) asked of this request's client,
        bound to it: sent now on a handshake-era connection, else (2026-07-28) handed over as
        an ``InputRequiredResult`` the client answers by retrying. The answer as ``kind``, or
        None (refused, failed, timed out, or the request was cancelled)."""
        from mcp.shared.message import ServerMessageMetadata

        running = self.running
        with anyio.move_on_after(self.app.approval_timeout) as scope:
            if running is not None:
                running.asking = scope
            try:
                if self.ctx.session.can_send_request:
                    return await self.ctx.session.send_request(
                        request, kind,
                        metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id))
                if running is None:
                    return None
                answer = await self.app.ask_later(running, request)
                return answer if isinstance(answer, kind) else None
            except Exception as exc:  # the client refused or failed: so does the relay
                log.info("a proxied server's %s failed in the client: %s", request.method, exc)
                return None
            finally:
                if running is not None:
                    running.asking = None
        return None

    async def _elicit_url(self, message: str, request: dict[str, Any]) -> dict[str, Any] | None:
        import mcp_types as types

        result = await self._ask(types.ElicitRequest(params=types.ElicitRequestURLParams(
            message=message, url=str(request.get("url", "")),
            elicitation_id=str(request.get("elicitationId", "")))), types.ElicitResult)
        if result is None:
            return {"action": "cancel"}
        return dict(result.model_dump(by_alias=True, mode="json", exclude_none=True))

    def sample(self, server: str, request: dict[str, Any]) -> dict[str, Any] | None:
        """A proxied server's ``sampling/createMessage``, asked of this request's client."""
        if not self._can("sampling"):
            return None
        return self._run(self._sample, request)

    async def _sample(self, request: dict[str, Any]) -> dict[str, Any] | None:
        import mcp_types as types

        try:
            params = types.CreateMessageRequestParams.model_validate(request, by_name=False)
        except ValueError:
            return None
        kind: Any = types.CreateMessageResultWithTools if params.tools else \
            types.CreateMessageResult
        result = await self._ask(types.CreateMessageRequest(params=params), kind)
        if result is None:
            return None
        return dict(result.model_dump(by_alias=True, mode="json", exclude_none=True))

    # --- not blocking: from any thread ------------------------------------------------------

    def log(self, level: str, logger: str | None, data: Any) -> None:
        """Send a ``notifications/message`` on this request's stream (if the client's level
        lets it through); never blocks, never raises."""
        self.app.log_soon(self.loop, self.ctx.session, level, logger, data,
                          self.ctx.request_id)


class ToClient(logging.Handler):
    """callgate's own warnings while a call runs, to that call's client (item 6)."""

    def emit(self, record: logging.LogRecord) -> None:
        from ._approval import current_channel

        channel = current_channel.get()
        relay = getattr(channel, "relay", None) if channel is not None else None
        if relay is None or record.name.startswith("callgate.mcp_serve"):
            return  # not in a call, or about the relaying itself
        try:
            text = record.getMessage()
        except Exception:
            return
        relay.log(PY_LEVELS.get(record.levelname, "warning"), record.name, text)


_handler: ToClient | None = None


def install_log_relay() -> None:
    """Relay the ``callgate`` logger's warnings (once per process)."""
    global _handler
    if _handler is None:
        _handler = ToClient(logging.WARNING)
        logging.getLogger("callgate").addHandler(_handler)


__all__ = ["LEVELS", "ClientRelay", "ToClient", "at_least", "install_log_relay"]
