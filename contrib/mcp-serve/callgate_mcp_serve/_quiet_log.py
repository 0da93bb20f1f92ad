"""The log of ``serve --http``: bounded, and never written from the event loop.

A storm of failures (an accept loop out of descriptors, a flood of malformed
requests) used to log a traceback per event straight to stderr from the event loop;
where stderr is a pipe its reader drains lazily (a supervisor, an MCP client), the
write blocked, and with it the whole server: nothing answered, SIGTERM ignored.

`BoundedLogHandler` replaces the stderr handlers of the root logger while the server
runs:

- at most ``burst`` records at once and ``per_second`` after that (a token bucket);
  what is over is counted, and the next record admitted says how many were left out,
  so a storm costs a few lines, not megabytes;
- a record is formatted where it is logged (only when admitted) and handed to a
  writer thread through a bounded queue; when the queue is full (stderr is not read)
  the record is dropped and counted: the event loop never waits on stderr;
- `flush` and `close` never wait on a write either, so the process can always exit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import time

DEFAULT_BURST = 20
DEFAULT_PER_SECOND = 1.0
DEFAULT_QUEUE = 256


class BoundedLogHandler(logging.Handler):
    """A rate-limited handler whose writes happen in a thread of their own."""

    def __init__(self, fd: int = 2, *, burst: int = DEFAULT_BURST,
                 per_second: float = DEFAULT_PER_SECOND, queue_size: int = DEFAULT_QUEUE,
                 level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.fd = fd
        self.burst = burst
        self.per_second = per_second
        self._tokens = float(burst)
        self._refilled = time.monotonic()
        self._bucket = threading.Lock()
        #: records left out since the last one written (rate, or a full queue)
        self.suppressed = 0
        #: records left out in all
        self.suppressed_total = 0
        self._queue: queue.Queue[bytes | None] = queue.Queue(queue_size)
        #: the handlers `install` took off the root logger (`uninstall` puts them back)
        self.replaced: list[logging.Handler] = []
        self._writer = threading.Thread(target=self._write_loop, name="callgate log writer",
                                         daemon=True)
        self._writer.start()

    def _admit(self) -> int | None:
        """``None`` if the record must be left out, else how many were left out before."""
        with self._bucket:
            now = time.monotonic()
            self._tokens = min(float(self.burst),
                               self._tokens + (now - self._refilled) * self.per_second)
            self._refilled = now
            if self._tokens < 1.0:
                self.suppressed += 1
                self.suppressed_total += 1
                return None
            self._tokens -= 1.0
            left_out, self.suppressed = self.suppressed, 0
            return left_out

    def emit(self, record: logging.LogRecord) -> None:
        left_out = self._admit()
        if left_out is None:
            return
        try:
            text = self.format(record)
        except Exception:
            self.handleError(record)
            return
        if left_out:
            text = (f"callgate: ({left_out} log messages left out: too many at once)\n"
                    f"{text}")
        try:
            self._queue.put_nowait((text + "\n").encode("utf-8", "replace"))
        except queue.Full:
            with self._bucket:
                self.suppressed += 1 + left_out
                self.suppressed_total += 1

    def _write_loop(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError:  # stderr closed or gone: the log is lost, the server is not
                continue

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for what is queued to be written."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        return self._queue.empty()

    def flush(self) -> None:
        """Never waits: what is queued is written by the writer thread, if it can be."""

    def close(self) -> None:
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)
        super().close()


def install(level: int | None = None) -> BoundedLogHandler:
    """Route the root logger (and warnings) through a `BoundedLogHandler` instead of the
    handlers writing to stderr; it keeps their format and the root logger's level."""
    root = logging.getLogger()
    replaced = [h for h in root.handlers if isinstance(h, logging.StreamHandler)
                and getattr(h, "stream", None) in (sys.stderr, sys.__stderr__)]
    for handler in replaced:
        root.removeHandler(handler)
    formatter = next((h.formatter for h in replaced if h.formatter is not None), None)
    bounded = BoundedLogHandler(level=root.level if level is None else level)
    bounded.setFormatter(formatter or logging.Formatter("callgate: %(message)s"))
    bounded.replaced = replaced
    root.addHandler(bounded)
    logging.captureWarnings(True)  # a warnings.warn storm goes through it too
    return bounded


def uninstall(handler: BoundedLogHandler) -> None:
    """Take ``handler`` off the root logger and put back the handlers it replaced."""
    root = logging.getLogger()
    root.removeHandler(handler)
    for replaced in handler.replaced:
        root.addHandler(replaced)
    logging.captureWarnings(False)
    handler.close()


__all__ = ["BoundedLogHandler", "install", "uninstall"]
