"""Connections of ``serve --http`` within bounds (uvicorn's h11 protocol, bounded).

~1,100 connections that never finished their headers used to exhaust the default
descriptor limit (1,024): accept then failed with EMFILE on every try, the event loop
logged a traceback per try, and the server answered no one again. So:

- **a connection limit below the descriptor limit** (`connection_limits`): the soft
  ``RLIMIT_NOFILE`` less a reserve for everything else the process opens (the store,
  job pipes, child servers) and less the accept batch (how many connections asyncio
  accepts in one go, kept small enough that a batch cannot run the descriptors out);
  the kernel's listen queue stays long (`LISTEN_QUEUE`: a connection waiting there
  holds no descriptor of ours);
- **over the limit, the oldest connection still waiting for its request headers
  makes room** (a half-open flood cannot lock out a real client); when every
  connection is busy with a request, the new one is answered 503 and closed;
- **a header timeout**: a connection that has not sent a whole request head within
  ``header_timeout`` seconds of connecting (or of its last response, when kept alive)
  is closed, however slowly it trickles bytes;
- **closing on EOF**: a client that half-closes before sending a request is closed
  at once (h11's protocol closes on EOF; nothing here keeps it open).

Header size is bounded by h11 itself (``h11_max_incomplete_event_size``, 16 KiB).
"""

from __future__ import annotations

import asyncio
import logging
import resource
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("callgate.mcp_serve.http")

DEFAULT_HEADER_TIMEOUT_S = 10.0
#: connections the kernel may hold for us before they are accepted (they use no descriptor
#: of this process until then; the kernel caps it at ``net.core.somaxconn``)
LISTEN_QUEUE = 4096
#: the most connections served at once, however many descriptors there are
MAX_CONNECTIONS_CAP = 4096
MAX_HEADER_BYTES = 16 * 1024
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
         b"connection: close\r\ncontent-length: 31\r\n\r\ntoo many connections; try again")


def descriptor_limit() -> int:
    """This process's soft ``RLIMIT_NOFILE`` (unlimited reads as a large number)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)


#: accept batches in flight at once: asyncio accepts a batch per loop turn, and a batch's
#: connections reach ``connection_made`` (where the limit is kept) two turns later, and
#: their sockets close a turn after that
BATCHES_IN_FLIGHT = 4


def connection_limits(descriptors: int) -> tuple[int, int]:
    """``(connections, accept batch)`` for ``descriptors`` descriptors: the batch is a
    32nd of them (8 to 512), a reserve of an eighth (at least 64) stays for the rest of
    the process, `BATCHES_IN_FLIGHT` batches may be accepted before the limit applies to
    them, and connections get what remains (16 to `MAX_CONNECTIONS_CAP`)."""
    batch = max(8, min(512, descriptors // 32))
    reserve = max(64, descriptors // 8)
    connections = descriptors - reserve - BATCHES_IN_FLIGHT * batch
    return max(16, min(MAX_CONNECTIONS_CAP, connections)), batch


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection limit and a header timeout (`bounded`
    makes a subclass with the numbers of one server)."""

    max_connections: ClassVar[int] = MAX_CONNECTIONS_CAP
    header_timeout: ClassVar[float] = DEFAULT_HEADER_TIMEOUT_S

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()
        if len(self.connections) > self.max_connections:
            waiting = _waiting(self.server_state)
            oldest = next((c for c in waiting if c is not self), None)
            if oldest is not None:
                log.debug("connection limit %d reached: closed the oldest connection still "
                          "waiting for its request", self.max_connections)
                oldest._close()
            else:
                log.warning("connection limit %d reached and every connection is busy: "
                            "refused one", self.max_connections)
                self._busy()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._between_requests():
            self._headers_done()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._between_requests():
            self._await_headers()  # kept alive: the next request's head is timed too

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        super().connection_lost(exc)

    # --- waiting for a request head -------------------------------------------------------

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _await_headers(self) -> None:
        waiting = _waiting(self.server_state)
        if self in waiting:
            return  # the clock runs from the first byte it waited for, not the last
        waiting[self] = None
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _headers_done(self) -> None:
        _waiting(self.server_state).pop(self, None)
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._between_requests() and not self.transport.is_closing():
            log.debug("closed a connection that sent no request head within %ss",
                      self.header_timeout)
            self._close()

    def _close(self) -> None:
        self._headers_done()
        self.transport.close()

    def _busy(self) -> None:
        self._headers_done()
        self.transport.write(_BUSY)
        self.transport.close()


def _waiting(state: Any) -> dict[BoundedH11Protocol, None]:
    """The connections of one server waiting for a request head, oldest first."""
    found = getattr(state, "_callgate_waiting", None)
    if found is None:
        found = {}
        state._callgate_waiting = found
    return found


def bounded(max_connections: int, header_timeout: float) -> type[BoundedH11Protocol]:
    """The protocol class of one server, with its limits."""
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {
        "max_connections": max_connections, "header_timeout": header_timeout})


__all__ = ["DEFAULT_HEADER_TIMEOUT_S", "LISTEN_QUEUE", "MAX_CONNECTIONS_CAP", "MAX_HEADER_BYTES",
           "BoundedH11Protocol", "bounded", "connection_limits", "descriptor_limit"]
