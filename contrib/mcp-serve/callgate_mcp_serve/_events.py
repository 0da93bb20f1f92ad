"""Resumable streams for ``serve --http``: a bounded, per-session event store (issue 34, item 3).

The SDK's streamable-HTTP transport stores every message it sends through an
``EventStore`` before it writes it, tags it with the store's event id, opens every
request's SSE stream with a priming event (an id, an empty ``data``, and ``retry``: how
long the client waits before it reconnects), and answers a GET carrying
``Last-Event-ID`` by replaying what the store kept after that id on the same stream. So a
client whose POST stream drops mid-call reconnects with the last id it saw and receives
the response of the call, whether it finished meanwhile or finishes later.

`EventLog` is the one store of a server process, `SessionEvents` a session's view of it
(the SDK's ``EventStore`` interface). What it keeps is bounded whatever the traffic:

- per session at most `SESSION_MAX_EVENTS` events and `SESSION_MAX_BYTES` bytes of JSON,
- in all at most `TOTAL_MAX_BYTES`, and nothing older than `MAX_AGE_S` seconds;

the oldest go first. A message is kept as its JSON text (its size is then exact) and
parsed again only to replay it. Event ids are ``<process prefix>-<number>``; a session
replays only its own events, so another session's id (or one from before a restart) is
unknown to it: `SessionManager` answers such a reconnect with 409 and opens nothing.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict, deque
from typing import Any

import attrs
import mcp_types as types
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

#: what one session keeps for its reconnecting client
SESSION_MAX_EVENTS = 128
SESSION_MAX_BYTES = 1 << 20
#: what the whole process keeps for all sessions
TOTAL_MAX_BYTES = 16 << 20
#: an event older than this is of no use to a client that reconnects after ``retry``
MAX_AGE_S = 600.0
#: milliseconds a client waits before it reconnects a dropped stream (SSE ``retry``)
RETRY_MS = 1000


@attrs.define(slots=True)
class _Event:
    session: str
    stream: str
    json: str | None  # None: a priming event (no message)
    at: float

    @property
    def size(self) -> int:
        return len(self.json) if self.json is not None else 0


class EventLog:
    """Every session's recent events, bounded in count, bytes and age, oldest evicted first."""

    def __init__(self, *, session_max_events: int = SESSION_MAX_EVENTS,
                 session_max_bytes: int = SESSION_MAX_BYTES,
                 total_max_bytes: int = TOTAL_MAX_BYTES, max_age_s: float = MAX_AGE_S,
                 clock: Any = time.monotonic) -> None:
        self.session_max_events = session_max_events
        self.session_max_bytes = session_max_bytes
        self.total_max_bytes = total_max_bytes
        self.max_age_s = max_age_s
        self._clock = clock
        self._prefix = os.urandom(4).hex()
        self._next = 0
        self._events: OrderedDict[str, _Event] = OrderedDict()
        self._by_session: dict[str, deque[str]] = {}
        self._session_bytes: dict[str, int] = {}
        self.total_bytes = 0

    def session(self, key: str) -> SessionEvents:
        """The SDK ``EventStore`` of session ``key``."""
        return SessionEvents(self, key)

    def __len__(self) -> int:
        return len(self._events)

    def add(self, session: str, stream: str, message: types.JSONRPCMessage | None) -> str:
        self._next += 1
        event_id = f"{self._prefix}-{self._next}"
        data = None if message is None else message.model_dump_json(by_alias=True,
                                                                    exclude_unset=True)
        event = _Event(session, stream, data, self._clock())
        self._events[event_id] = event
        self._by_session.setdefault(session, deque()).append(event_id)
        self._session_bytes[session] = self._session_bytes.get(session, 0) + event.size
        self.total_bytes += event.size
        self._bound(session)
        return event_id

    def _bound(self, session: str) -> None:
        ids = self._by_session[session]
        while ids and (len(ids) > self.session_max_events or
                       self._session_bytes[session] > self.session_max_bytes):
            self._remove(ids[0])
        horizon = self._clock() - self.max_age_s
        while self._events:
            oldest_id, oldest = next(iter(self._events.items()))
            if self.total_bytes <= self.total_max_bytes and oldest.at >= horizon:
                break
            self._remove(oldest_id)

    def _remove(self, event_id: str) -> None:
        event = self._events.pop(event_id)
        ids = self._by_session[event.session]
        ids.remove(event_id)  # the oldest of its session: at the front
        self._session_bytes[event.session] -= event.size
        self.total_bytes -= event.size
        if not ids:
            del self._by_session[event.session]
            del self._session_bytes[event.session]

    def knows(self, session: str, event_id: str) -> bool:
        """Whether ``event_id`` is one of ``session``'s events still kept."""
        event = self._events.get(event_id)
        return event is not None and event.session == session

    def json_of(self, session: str, event_id: str) -> str | None:
        """The JSON text kept for ``event_id`` of ``session`` (``None``: not kept, or a
        priming event): what the stream sends is the text kept, serialized once."""
        event = self._events.get(event_id)
        return event.json if event is not None and event.session == session else None

    def after(self, session: str, event_id: str) -> tuple[str, list[tuple[str, str]]] | None:
        """The stream of ``event_id`` and its later events (id, JSON) of ``session``, or
        ``None`` when the id is not one of the session's events still kept."""
        if not self.knows(session, event_id):
            return None
        stream = self._events[event_id].stream
        ids = list(self._by_session[session])
        later = ids[ids.index(event_id) + 1:]
        out = []
        for later_id in later:
            event = self._events[later_id]
            if event.stream == stream and event.json is not None:
                out.append((later_id, event.json))
        return stream, out

    def drop(self, session: str) -> None:
        """The session ended: its events go."""
        for event_id in list(self._by_session.get(session, ())):
            self._remove(event_id)


class SessionEvents(EventStore):
    """One session's view of the `EventLog`: the SDK transport's ``event_store``."""

    def __init__(self, log: EventLog, key: str) -> None:
        self.log = log
        self.key = key

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        return self.log.add(self.key, stream_id, message)

    async def replay_events_after(self, last_event_id: str,
                                  send_callback: EventCallback) -> str | None:
        found = self.log.after(self.key, last_event_id)
        if found is None:
            return None
        stream, events = found
        for event_id, data in events:
            message = types.jsonrpc_message_adapter.validate_json(data, by_name=False)
            await send_callback(EventMessage(message, event_id))
        return stream

    def knows(self, event_id: str) -> bool:
        return self.log.knows(self.key, event_id)

    def json_of(self, event_id: str) -> str | None:
        return self.log.json_of(self.key, event_id)


__all__ = ["MAX_AGE_S", "RETRY_MS", "SESSION_MAX_BYTES", "SESSION_MAX_EVENTS",
           "TOTAL_MAX_BYTES", "EventLog", "SessionEvents"]
