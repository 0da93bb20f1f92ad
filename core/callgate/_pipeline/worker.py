"""Running a tool so that a cancel can always walk away from it.

A tool sees a cancel through ``ctx.cancelled`` and is expected to stop; most
do within milliseconds (bash kills its process group, grep stops its walk).
One stuck in a blocking system call (a read of a FIFO, a hung network
filesystem) never looks. So the pipeline runs every tool here:

- `CancelEvent` is the ``threading.Event`` behind ``ctx.cancelled`` that also
  tells the event loop, from whichever thread ``session.cancel()`` runs on.
- `run_sync` runs a sync tool in a daemon worker thread (threads are reused)
  and `run_async` awaits an async one (in a cancel scope; the cancel's subscription
  is taken once it suspends: one that never suspends cannot block); once the call is
  cancelled and has not finished ``grace`` seconds later, the pipeline stops waiting and raises
  `Abandoned`: the batch lock is released and the call reports ``cancelled``.
  An abandoned sync tool runs on in its thread until its system call returns;
  the worker is a daemon, so it never keeps the process from exiting.
"""

from __future__ import annotations

import contextvars
import queue
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator
from types import CoroutineType
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

#: How long a cancelled tool has to stop on its own before the pipeline walks away.
DEFAULT_GRACE_S = 3.0
_IDLE_S = 30.0


class _LoopAPI:
    """``anyio.lowlevel.current_token`` and ``anyio.from_thread.run_sync``, imported at first use.

    At module level those two modules load anyio's whole core (~30 modules), which a
    cold ``callgate tools`` never needs; a function-local import would cost ~1 us on
    every call, so the functions are looked up once and kept as attributes."""

    current_token: Callable[[], Any]
    run_sync: Callable[..., Any]

    def __getattr__(self, name: str) -> Any:  # only while an attribute is not set yet
        import anyio.from_thread
        import anyio.lowlevel

        self.current_token = anyio.lowlevel.current_token
        self.run_sync = anyio.from_thread.run_sync
        return object.__getattribute__(self, name)


_loop = _LoopAPI()


class Abandoned(Exception):
    """The call was cancelled and did not stop within the grace period."""

    def __init__(self, grace: float) -> None:
        super().__init__(f"did not stop within {grace:g} s of the cancel")
        self.grace = grace


class CancelEvent(threading.Event):
    """A ``threading.Event`` whose ``set()`` also runs the callbacks waiting on an event loop."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._waiters: dict[int, tuple[Callable[[], None], Any, int]] = {}
        self._next = 0

    def set(self) -> None:
        super().set()
        with self._guard:
            waiters = list(self._waiters.values())
        for callback, token, thread in waiters:
            _call_on_loop(callback, token, thread)

    def subscribe(self, callback: Callable[[], None]) -> int:
        """Run ``callback`` on the calling event loop once set (at once if already set)."""
        entry = (callback, _loop.current_token(), threading.get_ident())
        with self._guard:
            handle = self._next
            self._next += 1
            self._waiters[handle] = entry
        if self.is_set():
            callback()
        return handle

    def unsubscribe(self, handle: int) -> None:
        with self._guard:
            self._waiters.pop(handle, None)


def _call_on_loop(callback: Callable[[], None], token: Any, thread: int) -> None:
    if threading.get_ident() == thread:
        callback()
        return
    try:
        _loop.run_sync(callback, token=token)
    except RuntimeError:
        pass  # that loop has stopped: nobody is waiting any more


async def run_async(
    fn: Callable[[], Awaitable[T]], cancelled: threading.Event, grace: float = DEFAULT_GRACE_S
) -> T:
    """Await ``fn()``; `Abandoned` when cancelled and still running ``grace`` s later
    (`begin_guarded`: no wrapping coroutine; the cancel subscription only once it suspends)."""
    done, value = begin_guarded(fn(), cancelled, grace)
    return value if done else await value  # type: ignore[no-any-return]


def begin(awaitable: Awaitable[T]) -> tuple[bool, Any]:
    """Start awaiting ``awaitable`` here, without a task or a wrapping coroutine:
    ``(True, value)`` when it finished without suspending, else ``(False, rest)``, where
    awaiting ``rest`` finishes it (a tool declared non-blocking: no guard)."""
    if type(awaitable) is not CoroutineType:
        return False, awaitable
    try:
        first = awaitable.send(None)
    except StopIteration as done:
        return True, done.value
    return False, _Resumed(awaitable, first)


def begin_guarded(
    awaitable: Awaitable[T], cancelled: threading.Event, grace: float = DEFAULT_GRACE_S
) -> tuple[bool, Any]:
    """Start awaiting an async tool's ``awaitable`` so that a cancel can walk away from it:
    ``(True, value)`` when it finished without suspending, else ``(False, rest)``, where
    awaiting ``rest`` (at once, in the same task) finishes it, raising `Abandoned` when it
    is cancelled and still running ``grace`` s later.

    On asyncio the guard is set up only where the tool can block: its coroutine runs to
    its first suspension here, unguarded (a cancel reaches a coroutine only where it
    suspends), and from there on under an ``asyncio.timeout`` that a cancel shortens to
    ``grace`` (a timeout keeps no stack of scopes, so the tool's own cancel scopes and
    task groups, entered before it, need not nest inside it). On another event loop an
    anyio cancel scope is entered before the first step (its scopes must nest)."""
    if not isinstance(cancelled, CancelEvent):
        return False, awaitable
    aio = sys.modules.get("asyncio")
    if aio is not None and aio._get_running_loop() is not None:
        done, rest = begin(awaitable)
        if done:  # finished without suspending: nothing could block
            return True, rest
        return False, _guarded_asyncio(rest, cancelled, grace)
    scope = anyio.CancelScope()
    scope.__enter__()
    try:
        done, rest = begin(awaitable)  # another awaitable than a coroutine: guarded as it is
        if done:  # finished without suspending
            scope.__exit__(None, None, None)
            return True, rest
    except BaseException as exc:
        if scope.__exit__(type(exc), exc, exc.__traceback__):
            raise Abandoned(grace) from None
        raise
    return False, _guarded_rest(scope, rest, cancelled, grace)


async def _guarded_asyncio(rest: Awaitable[T], cancelled: CancelEvent, grace: float) -> T:
    """Await ``rest`` (a suspended tool) under an ``asyncio.timeout`` that a cancel of the
    session shortens to ``grace`` s; `Abandoned` when that timeout ends it (a tool's own
    ``TimeoutError`` stays its own)."""
    import asyncio  # this runs on asyncio's loop: already imported

    loop = asyncio.get_running_loop()
    timeout = asyncio.timeout(None)

    def shorten() -> None:
        when, current = loop.time() + grace, timeout.when()
        if current is None or when < current:
            timeout.reschedule(when)

    try:
        async with timeout:
            handle = cancelled.subscribe(shorten)
            try:
                return await rest
            finally:
                cancelled.unsubscribe(handle)
    except TimeoutError:
        if timeout.expired():
            raise Abandoned(grace) from None
        raise


async def _guarded_rest(
    scope: anyio.CancelScope, rest: Awaitable[T], cancelled: CancelEvent, grace: float
) -> T:
    """The rest of a call `begin_guarded` started inside ``scope`` (entered, in this task):
    a cancel shortens the scope to ``grace`` s; the scope is left when the call ends."""

    def shorten() -> None:
        scope.deadline = min(scope.deadline, anyio.current_time() + grace)

    handle = cancelled.subscribe(shorten)
    try:
        value = await rest
    except BaseException as exc:
        cancelled.unsubscribe(handle)
        if scope.__exit__(type(exc), exc, exc.__traceback__):
            raise Abandoned(
                grace
            ) from None  # the scope caught the cancellation it was shortened for
        raise
    cancelled.unsubscribe(handle)
    scope.__exit__(None, None, None)
    return value


async def _guarded(rest: Awaitable[T], cancelled: CancelEvent, grace: float) -> T:
    """Await ``rest`` in a cancel scope that expires ``grace`` s after ``cancelled``, then
    `Abandoned` if the scope caught that cancellation (a plain coroutine, not a context
    manager: its generator would cost as much as the scope, on every call)."""
    with anyio.CancelScope() as scope:

        def shorten() -> None:
            scope.deadline = min(scope.deadline, anyio.current_time() + grace)

        handle = cancelled.subscribe(shorten)
        try:
            return await rest
        finally:
            cancelled.unsubscribe(handle)
    raise Abandoned(grace)  # the scope caught the cancellation it was shortened for


class _Resumed:
    """A coroutine that has already run to its first suspension (``first``: what it
    yielded to the event loop), awaited from there with ``await``'s own delegation: what
    the loop sends or throws (a cancellation) goes to the coroutine, what it yields goes
    to the loop, closing it closes the coroutine."""

    __slots__ = ("_coroutine", "_first")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], first: Any) -> None:
        self._coroutine = coroutine
        self._first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        return _resume(self._coroutine, self._first)


def _resume(coroutine: Coroutine[Any, Any, T], first: Any) -> Generator[Any, Any, T]:
    value = first
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:  # a cancellation (or anything the loop throws in)
            try:
                value = coroutine.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                value = coroutine.send(sent)
            except StopIteration as done:
                return done.value


async def run_sync(
    fn: Callable[[], T], cancelled: threading.Event, grace: float = DEFAULT_GRACE_S
) -> T:
    """Run ``fn()`` in a daemon worker thread; `Abandoned` as for `run_async`."""
    done = anyio.Event()
    token = _loop.current_token()
    # asyncio's loop is woken without the worker waiting for it (anyio's run_sync would:
    # one more thread wake-up per call, competing with the loop as it resumes the call)
    soon = getattr(token.native_token, "call_soon_threadsafe", None)
    outcome: list[Any] = []
    context = contextvars.copy_context()

    def job() -> None:
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:  # handed to the awaiting task
            outcome.append((False, exc))
        try:
            if soon is not None:
                soon(done.set)
            else:
                _loop.run_sync(done.set, token=token)
        except RuntimeError:
            pass  # the loop is gone (an abandoned call finishing late)

    _POOL.submit(job)
    if isinstance(cancelled, CancelEvent):  # the guard written out: no context-manager generator
        await _guarded(done.wait(), cancelled, grace)
    else:
        await done.wait()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


class _Pool:
    """Daemon threads, reused; one idles out after ``_IDLE_S`` seconds without work."""

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue[Callable[[], None]]] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=self._serve, args=(inbox,), name="callgate-tool", daemon=True
            ).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            try:
                job = inbox.get(timeout=_IDLE_S)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                continue  # handed a job just as we timed out
            job()
            del job
            with self._lock:
                self._idle.append(inbox)


_POOL = _Pool()
