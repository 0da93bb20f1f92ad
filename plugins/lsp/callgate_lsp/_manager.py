"""``session.lsp``: one session's language servers, on a private event-loop thread.

A session is driven from many event loops and threads (the sync facade, replay,
``callgate serve``, worker threads for sync tools), while a pygls connection
is bound to the loop that opened it. So each session that uses a language
server owns one daemon thread running its own asyncio loop, started with the
first server; queries are coroutines submitted to it, and callers block on
the returned futures (watching ``ctx.cancelled``).

One server per language: started lazily by the first query that needs it
(concurrent first queries wait for the same start), restarted with a note by
the next query after it died, and stopped with the session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import sniffio
from callgate import ToolError

from ._server import Server, ServerFailed
from ._table import ServerSpec, ServerTable

if TYPE_CHECKING:
    from ._after_edit import Snapshot

log = logging.getLogger("callgate.lsp")

T = TypeVar("T")

RETRY_AFTER_FAILED_START_S = 30.0
_POLL_S = 0.1


class Cancelled(Exception):
    """The integrator cancelled the batch while a query waited."""


class LspManager:
    """The language servers of one session (the ``session.lsp`` extension)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.root: str = session.workspace.root
        self.config: dict[str, Any] = dict(session.host.config("lsp"))
        self._table: ServerTable | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._closed = False
        # on the loop only:
        self._servers: dict[str, Server] = {}
        self._starting: dict[str, asyncio.Lock] = {}
        self._failed: dict[str, tuple[float, str]] = {}
        # diagnostics after edits: snapshots by call id (see _after_edit)
        self.snapshots: dict[str, Snapshot] = {}
        self.checks: dict[str, asyncio.Task[Any]] = {}  # on the loop: the last check per path
        self.missing_noted: set[str] = set()

    @property
    def table(self) -> ServerTable:
        if self._table is None:
            self._table = ServerTable(self.config.get("servers") or {})
        return self._table

    # --- from any thread ------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the session's LSP loop (started on first use)."""
        with self._guard:
            if self._closed:
                coro.close()
                raise ToolError("tool_error", "the session is closed", "LSP_CLOSED")
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._run, args=(self._loop,),
                                                name="callgate-lsp", daemon=True)
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def wait(self, future: concurrent.futures.Future[T],
             cancelled: threading.Event | None = None, timeout_s: float | None = None) -> T:
        """Block until ``future`` is done; `Cancelled` (and the task cancelled) if
        ``cancelled`` is set first; `TimeoutError` after ``timeout_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            step = _POLL_S if deadline is None else max(0.0, min(_POLL_S,
                                                                  deadline - time.monotonic()))
            done, _ = concurrent.futures.wait([future], timeout=step)
            if done:
                return future.result()
            if cancelled is not None and cancelled.is_set():
                future.cancel()
                raise Cancelled()
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError()

    def run(self, coro: Coroutine[Any, Any, T], cancelled: threading.Event | None = None) -> T:
        """Run ``coro`` on the LSP loop and block until it is done."""
        return self.wait(self.submit(coro), cancelled)

    async def call(self, coro: Coroutine[Any, Any, T],
                   cancelled: threading.Event | None = None) -> T:
        """Run ``coro`` on the LSP loop and await it from the caller's loop: directly under
        asyncio (one wake-up each way), through a worker thread under another backend."""
        future = self.submit(coro)
        try:
            backend = sniffio.current_async_library()
        except sniffio.AsyncLibraryNotFoundError:
            backend = None
        if backend != "asyncio":
            return await anyio.to_thread.run_sync(self.wait, future, cancelled)
        waited = asyncio.wrap_future(future)
        try:
            while True:
                done, _ = await asyncio.wait({waited}, timeout=_POLL_S)
                if done:
                    return waited.result()
                if cancelled is not None and cancelled.is_set():
                    raise Cancelled()
        except BaseException:  # cancelled here, or by the caller's task group
            future.cancel()
            raise

    def servers(self) -> list[dict[str, Any]]:
        """What runs now: ``[{language, command, pid, encoding, alive, indexing}]``."""
        if self._loop is None or self._closed:
            return []

        async def listing() -> list[dict[str, Any]]:
            return [{**s.describe(), "alive": s.alive, "indexing": s.indexing}
                    for s in self._servers.values()]

        return self.run(listing())

    def close(self) -> None:
        """Stop every server (shutdown, exit, kill of its group), then the loop thread."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        for snapshot in self.snapshots.values():
            snapshot.cancel()
        self.snapshots.clear()
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop_all(), loop).result(15)
        except Exception:
            log.warning("stopping language servers took too long; killing them", exc_info=True)
            for server in list(self._servers.values()):
                server.kill()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        if not thread.is_alive():
            loop.close()

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    # --- on the loop -------------------------------------------------------------------------

    async def _stop_all(self) -> None:
        servers = list(self._servers.values())
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)

    async def server(self, spec: ServerSpec) -> tuple[Server, str | None]:
        """The live server of ``spec.language``, started (once) if needed, and a note when it
        had to be restarted because the previous one died."""
        running = self._servers.get(spec.language)
        if running is not None and running.alive:
            return running, None
        lock = self._starting.setdefault(spec.language, asyncio.Lock())
        async with lock:
            running = self._servers.get(spec.language)
            if running is not None and running.alive:
                return running, None
            note = None
            if running is not None:
                note = (f"note: language server {spec.label} {running.exit_reason()}; it was "
                        "restarted for this query")
                running.kill()
                await running.reap()
                del self._servers[spec.language]
            failed = self._failed.get(spec.language)
            if failed is not None and time.monotonic() - failed[0] < RETRY_AFTER_FAILED_START_S:
                raise ServerFailed(failed[1], hung=True)
            server = Server(spec, self.root, self.session)
            try:
                await server.start(float(self.config.get("initialize_timeout_s", 30)))
            except ServerFailed as exc:
                if exc.hung:  # a hanging start costs the timeout: do not repeat it per query
                    self._failed[spec.language] = (time.monotonic(), exc.reason)
                await server.reap()
                raise
            except ToolError:  # not found on PATH: nothing was started
                raise
            except BaseException:  # cancelled, or a protocol failure: leave no process behind
                server.kill()
                await server.reap()
                raise
            self._failed.pop(spec.language, None)
            self._servers[spec.language] = server
            log.debug("started language server %s (pid %s, %s positions)", spec.label,
                      server.pid, server.encoding)
            return server, note
