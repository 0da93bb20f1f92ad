"""The blocking facade: the same host and session calls without ``await``.

One event-loop thread per host (an anyio ``BlockingPortal``) runs every
session coroutine, so scripts, tests and any number of threads can share a
session; its batches still run one at a time, in arrival order.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from ._host.host import Host as AsyncHost
from ._model.values import ToolCall, ToolResult
from ._session.session import Session as AsyncSession

__all__ = ["Host", "Session"]

log = logging.getLogger("callgate")

#: portals not yet stopped, held strongly so a forgotten host's portal is never finalised by
#: the garbage collector on its own loop thread (which then waits on itself forever)
_PORTALS: dict[int, AbstractContextManager[BlockingPortal]] = {}
#: hosts not yet closed: at interpreter exit each is closed (sessions, then its loop thread)
_OPEN: weakref.WeakSet[Host] = weakref.WeakSet()
_EXIT_LOCK = threading.Lock()
_exit_registered = False


def _close_at_exit() -> None:
    """Interpreter exit: close every host a script left open, then stop any portal left,
    before threading joins the loop threads (which would otherwise wait forever)."""
    for host in list(_OPEN):
        try:
            host.close()
        except Exception:
            log.exception("closing a callgate host at exit failed")
    for key in list(_PORTALS):
        cm = _PORTALS.pop(key, None)
        if cm is not None:
            try:
                cm.__exit__(None, None, None)
            except Exception:
                log.exception("stopping a callgate event-loop thread at exit failed")


def _register_exit() -> None:
    """Once, after the first portal started (so after concurrent.futures registered its own
    thread join): threading runs exit callbacks newest first, so ours runs before it."""
    global _exit_registered
    with _EXIT_LOCK:
        if not _exit_registered:
            threading._register_atexit(_close_at_exit)  # type: ignore[attr-defined]
            _exit_registered = True


class Session:
    """A session driven from synchronous code."""

    def __init__(self, host: Host, session: AsyncSession) -> None:
        self._host = host
        self.session = session

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        return self._host.portal.call(self.session.run_batch, list(calls))

    def run(self, call: ToolCall) -> ToolResult:
        [result] = self.run_batch([call])
        return result

    def snapshot(self, key: Any) -> Any:
        """`callgate.Session.snapshot`: what the session extension ``key`` reports of
        itself, from wherever the session's tools run."""
        return self._host.portal.call(self.session.snapshot, key)

    def run_items(self, rendering: str, items: Sequence[Any]) -> list[Any]:
        """A native rendering's raw call items in (one model turn), its raw result items out
        (the installed rendering's: `callgate_providers.run_items`)."""
        from ._host.renderings import rendering as installed

        return self._host.portal.call(installed(rendering).run_items, self.session, list(items))

    def close(self) -> None:
        if not self.session.closed:
            self._host.portal.call(self.session.close)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        # plain state and methods (counters, begin_turn, set_mode, surface, goals...)
        return getattr(self.session, name)


class Host:
    """A booted host plus its event-loop thread. ``close()`` stops the thread; a script that
    forgets to still exits (its open hosts are closed at interpreter exit)."""

    def __init__(self, host: AsyncHost) -> None:
        self.host = host
        self._cm: AbstractContextManager[BlockingPortal] | None = start_blocking_portal()
        self.portal: BlockingPortal = self._cm.__enter__()
        self._sessions: list[Session] = []
        _PORTALS[id(self._cm)] = self._cm
        _OPEN.add(self)
        _register_exit()

    @classmethod
    def boot(
        cls, config: str | os.PathLike[str] | Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Host:
        """Same arguments as `callgate.Host.boot`."""
        return cls(AsyncHost.boot(config, **kwargs))

    def open_session(self, workspace: str | os.PathLike[str], **kwargs: Any) -> Session:
        session = Session(self, self.portal.call(self._open, workspace, kwargs))
        self._sessions.append(session)
        return session

    async def _open(self, workspace: Any, kwargs: dict[str, Any]) -> AsyncSession:
        return self.host.open_session(workspace, **kwargs)

    def close(self) -> None:
        """Close every session opened here, then stop the loop thread (idempotent)."""
        for session in self._sessions:
            session.close()
        self._sessions.clear()
        if self._cm is not None:
            cm, self._cm = self._cm, None
            _OPEN.discard(self)
            _PORTALS.pop(id(cm), None)
            cm.__exit__(None, None, None)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.host, name)
