"""The pieces that keep ``serve --http`` within bounds (the end-to-end flood is in
tests/trust/test_http_bounds.py): the connection limit's arithmetic, and the log that
never blocks on stderr and never floods it."""

from __future__ import annotations

import logging
import os
import threading

import pytest
from callgate_mcp_serve._bounded_http import (
    BATCHES_IN_FLIGHT,
    MAX_CONNECTIONS_CAP,
    connection_limits,
)
from callgate_mcp_serve._quiet_log import BoundedLogHandler


@pytest.mark.parametrize("descriptors", [64, 256, 1024, 4096, 65536, 1 << 20])
def test_connections_and_accept_batches_stay_below_the_descriptor_limit(
        descriptors: int) -> None:
    connections, batch = connection_limits(descriptors)
    assert 16 <= connections <= MAX_CONNECTIONS_CAP and 8 <= batch <= 512
    if descriptors >= 256:
        # what may be open at once, with 64 descriptors for the rest of the process
        assert connections + BATCHES_IN_FLIGHT * batch + 64 <= descriptors


def _record(n: int) -> logging.LogRecord:
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        import sys

        exc_info = sys.exc_info()
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1,
                             "socket.accept() out of system resource %d", (n,), exc_info)


def _storm(handler: BoundedLogHandler, records: int) -> bool:
    """Log ``records`` records from another thread; whether that ended (within a guard)."""
    done = threading.Event()

    def storm() -> None:
        for n in range(records):
            handler.emit(_record(n))
        handler.flush()
        done.set()

    threading.Thread(target=storm, daemon=True).start()
    return done.wait(60)  # a hang guard, not a timing bound


def test_a_storm_is_rate_limited() -> None:
    read_end, write_end = os.pipe()
    handler = BoundedLogHandler(write_end, burst=5, per_second=0.0, queue_size=64)
    handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        assert _storm(handler, 20_000)
        assert handler.suppressed_total == 20_000 - 5
        assert handler.drain(10)
        os.set_blocking(read_end, False)
        written = os.read(read_end, 1 << 20)
        assert written.count(b"socket.accept() out of system resource") == 5
        assert written.count(b"Traceback") == 5
        assert len(written) < 8192
    finally:
        handler.close()
        os.close(read_end)
        os.close(write_end)


def test_logging_never_blocks_on_a_full_pipe_nobody_reads() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:  # fill the pipe: the writer thread's first write blocks
        while True:
            os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    handler = BoundedLogHandler(write_end, burst=10**9, per_second=1e9, queue_size=8)
    handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        assert _storm(handler, 20_000), "logging blocked on a pipe nobody reads"
        assert handler.suppressed_total >= 20_000 - 9  # 8 queued, 1 in the writer's hands
        assert not handler.drain(0.1)  # still stuck: only the writer thread waits
    finally:
        os.close(read_end)  # the writer's write fails (EPIPE) and it goes on
        handler.close()
        os.close(write_end)


def test_what_was_left_out_is_said_when_logging_resumes() -> None:
    read_end, write_end = os.pipe()
    handler = BoundedLogHandler(write_end, burst=1, per_second=0.0)
    handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        for n in range(4):
            handler.emit(_record(n))
        handler.per_second = 1e9  # the bucket refills: the next record is admitted
        handler.emit(logging.LogRecord("x", logging.ERROR, __file__, 1, "back", (), None))
        assert handler.drain(10)
        written = os.read(read_end, 1 << 16).decode()
        assert "(3 log messages left out: too many at once)\nback" in written
    finally:
        handler.close()
        os.close(read_end)
        os.close(write_end)


def test_install_replaces_the_stderr_handlers_and_uninstall_puts_them_back() -> None:
    import sys

    from callgate_mcp_serve import _quiet_log

    root = logging.getLogger()
    before = list(root.handlers)
    mine = logging.StreamHandler(sys.stderr)
    mine.setFormatter(logging.Formatter("mine: %(message)s"))
    root.addHandler(mine)
    try:
        bounded = _quiet_log.install(logging.ERROR)
        assert mine not in root.handlers and bounded in root.handlers
        assert bounded.formatter is mine.formatter and bounded.level == logging.ERROR
        _quiet_log.uninstall(bounded)
        assert mine in root.handlers and bounded not in root.handlers
    finally:
        root.removeHandler(mine)
    assert set(root.handlers) == set(before)
