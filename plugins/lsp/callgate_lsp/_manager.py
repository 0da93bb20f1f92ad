"""``session.extension(LSP)``: one session's language servers, on a private event-loop thread.

A session is driven from many event loops and threads (the sync facade, replay,
``callgate serve``, worker threads for sync tools), while a pygls connection
is bound to the loop that opened it. So each session that uses a language
server owns one daemon thread running its own asyncio loop, started with the
first server; queries are coroutines submitted to it, and callers block on
the returned futures (watching ``ctx.cancelled``).

One server per language: started lazily by the first query that needs it
(concurrent first queries wait for the same start), restarted with a note by
the next query after it died, and stopped with the session.

The manager subscribes to the session's changed files (``session.file_changes``: the
session's tools at once, shell commands and other programs through the workspace watcher)
and hands each batch to every running server (`Server.files_changed`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Coroutine, Sequence
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
#: a workspace with at most this many files of a language is "small" for its server:
#: lsp_references waits (``[lsp] references_wait_ms``) for the server to load it
SMALL_WORKSPACE_FILES = 2000
#: ... counted by walking at most this many directories
_SMALL_WALK_DIRS = 5000


class Cancelled(Exception):
    """The integrator cancelled the batch while a query waited."""


class LspManager:
    """The language servers of one session (the ``session.extension(LSP)`` extension)."""

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
        self._small: dict[str, bool] = {}  # language -> whether the workspace is small for it
        self._change_tasks: set[asyncio.Task[None]] = set()
        feed = getattr(session, "file_changes", None)
        self._unsubscribe = feed.subscribe(self._on_file_changes) if feed is not None else None

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
        if self._unsubscribe is not None:
            self._unsubscribe()
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

    def _on_file_changes(self, batch: Sequence[Any]) -> None:
        """A batch of changed files (`callgate.files.FileChange`), on the publisher's thread:
        handed to the loop, where each running server is told (nothing runs: nothing to tell)."""
        with self._guard:
            loop = self._loop
            if self._closed or loop is None:
                return
        try:
            loop.call_soon_threadsafe(self._changes_arrived, batch)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _changes_arrived(self, batch: Sequence[Any]) -> None:
        max_bytes = int(self.config.get("max_file_bytes", 2 * 1024 * 1024))
        for server in list(self._servers.values()):
            if not server.alive:
                continue
            task = asyncio.ensure_future(server.files_changed(batch, max_bytes, self.checks))
            self._change_tasks.add(task)
            task.add_done_callback(self._change_done)

    def _change_done(self, task: asyncio.Task[None]) -> None:
        self._change_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("telling a language server about changed files failed",
                      exc_info=task.exception())

    async def small_workspace(self, spec: ServerSpec) -> bool:
        """Whether the workspace has at most `SMALL_WORKSPACE_FILES` files of ``spec``'s
        extensions (counted once per language, off the loop, gitignored files left out):
        small enough that waiting for the server to load it is worth it."""
        known = self._small.get(spec.language)
        if known is None:
            loop = asyncio.get_running_loop()
            known = await loop.run_in_executor(None, _count_small, self.root, spec.extensions)
            self._small[spec.language] = known
        return known

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
        extra = self.config.get("server_paths") or ()
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
            server = Server(spec, self.root, self.session, extra)
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


def _count_small(root: str, extensions: Sequence[str]) -> bool:
    from callgate_toolkit.walk import IgnoreRules, walk_files

    wanted = {e.lower() for e in extensions}
    count = 0
    dirs = [0]

    def stop() -> bool:
        dirs[0] += 1
        return dirs[0] > _SMALL_WALK_DIRS

    try:
        for entry in walk_files(root, "", skip_hidden=True, ignore=IgnoreRules(root), stop=stop):
            if os.path.splitext(entry.rel)[1].lower() in wanted:
                count += 1
                if count > SMALL_WORKSPACE_FILES:
                    return False
    except OSError:
        return False
    return dirs[0] <= _SMALL_WALK_DIRS
