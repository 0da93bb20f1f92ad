"""Reading one window of lines from a file of any size (files.md §6.1, "Large files").

A window costs what it shows: the detection sample, then the bytes from the
window's first line to one byte past its last. Finding the first line of a
late window means counting newlines from the start once; the counts are kept
in a sparse line-offset index per file version (one entry per 64 KiB block),
so later windows of the same version seek straight to a block near them.
"""

from __future__ import annotations

import os
import threading
from bisect import insort
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import attrs
from callgate.text import DETECT_BYTES, bom_of, newline_bytes, unit_of

SAMPLE_BYTES = DETECT_BYTES  # the encoding sample: the same one edits decide by
LINE_MAX = 1 << 20          # a window line (without terminator) may be this long
WINDOW_MAX = 1 << 20        # raw line bytes in one window, terminators included
SMALL_FILE = 1 << 20        # read whole (for the snapshot and digest) up to this size
BLOCK = 64 << 10            # index granularity
CHUNK = 1 << 20             # largest read of a window
#: Scan read size when counting newlines: the chunk and numpy's mask of it stay in a
#: core's L2 cache (2 MiB here), ~20% faster than 1 MiB chunks on a first deep window.
SCAN_CHUNK = 512 << 10
INDEX_FILES = 32


class LineTooLong(Exception):
    """A window line over `LINE_MAX`; ``line`` is its 1-based number."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


@attrs.define
class Window:
    """Lines ``first``..``first + len(lines) - 1`` (1-based) as raw bytes with terminators."""

    first: int
    lines: list[bytes]
    more: bool
    total: int | None = None      # the file's line count, known when the scan reached EOF


class LineIndex:
    """Sparse offsets of one file version: ``pos`` (a block start) → newlines before it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._positions: list[int] = []
        self._counts: dict[int, int] = {}
        self.total: int | None = None

    def add(self, pos: int, count: int) -> None:
        with self._lock:
            if pos not in self._counts:
                self._counts[pos] = count
                insort(self._positions, pos)

    def before(self, newlines: int) -> tuple[int, int] | None:
        """The last known block start with fewer than ``newlines`` newlines before it."""
        with self._lock:
            if not self._positions:
                return None
            # counts grow with positions: binary search over positions by count
            lo, hi = 0, len(self._positions)
            while lo < hi:
                mid = (lo + hi) // 2
                if self._counts[self._positions[mid]] < newlines:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == 0:
                return None
            pos = self._positions[lo - 1]
            return pos, self._counts[pos]

    def __len__(self) -> int:
        with self._lock:
            return len(self._positions)


class IndexCache:
    """A few `LineIndex`es, by (path, version, encoding), least recently used dropped."""

    def __init__(self, size: int = INDEX_FILES) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[object, ...], LineIndex] = OrderedDict()
        self._size = size

    def get(self, key: tuple[object, ...]) -> LineIndex:
        with self._lock:
            index = self._items.get(key)
            if index is None:
                index = self._items[key] = LineIndex()
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(key)
            return index


INDEXES = IndexCache()


class Reader:
    """Positional reads of one open file, counted; ``head`` (the first bytes, already read
    for detection, or the whole of a small file) is served from memory."""

    def __init__(self, fd: int | None, size: int, head: bytes = b"") -> None:
        self.fd = fd
        self.size = size
        self.head = head
        self.bytes_read = len(head)

    def read(self, pos: int, n: int) -> bytes:
        end = min(pos + n, self.size)
        if end <= len(self.head) or self.fd is None:
            return self.head[pos:end]
        if pos < len(self.head):
            return self.head[pos:] + self.read(len(self.head), end - len(self.head))
        out = os.pread(self.fd, end - pos, pos)
        self.bytes_read += len(out)
        return out

    def scan(self, pos: int, n: int) -> tuple[bytes | bytearray, int]:
        """Like `read` for scanning: ``(buffer, length)``, the valid bytes first. Past the
        head it reuses one buffer (valid until the next call), so counting through a huge
        file allocates nothing per chunk."""
        if pos < len(self.head) or self.fd is None or not hasattr(os, "preadv"):
            data = self.read(pos, n)
            return data, len(data)
        want = max(0, min(pos + n, self.size) - pos)
        buf = getattr(self, "_scan_buf", None)
        if buf is None or len(buf) < want:
            buf = self._scan_buf = bytearray(max(want, SCAN_CHUNK))
        got = os.preadv(self.fd, [memoryview(buf)[:want]], pos)
        self.bytes_read += got
        return buf, got


def _newline_finder(encoding: str) -> Callable[[bytes, int, int], int]:
    """``find(buf, start, end)`` → the offset of the next newline unit, or -1."""
    nl = newline_bytes(encoding)
    if unit_of(encoding) == 1:
        return lambda buf, start, end: buf.find(nl, start, end)

    def find2(buf: bytes, start: int, end: int) -> int:
        pos = start
        while True:
            pos = buf.find(nl, pos, end)
            if pos < 0 or pos % 2 == 0:
                return pos
            pos += 1

    return find2


def _newline_counter(encoding: str) -> Callable[[bytes, int, int], int]:
    nl = newline_bytes(encoding)
    if unit_of(encoding) == 1:
        return lambda buf, start, end: buf.count(nl, start, end)
    find = _newline_finder(encoding)

    def count2(buf: bytes, start: int, end: int) -> int:
        n, pos = 0, start
        while True:
            pos = find(buf, pos, end)
            if pos < 0:
                return n
            n += 1
            pos += 2

    return count2


_numpy: object = None


def _block_counter(encoding: str) -> Callable[[bytes, list[tuple[int, int]]], list[int]]:
    """``counts(buf, blocks)``: newlines in each ``(start, end)`` block of ``buf``.

    Counting newlines is all a first late window costs, so for byte-unit
    encodings it uses numpy when it is installed (the ``callgate-files[fast]``
    extra: about twice the speed of ``bytes.count``), else ``bytes.count``.
    """
    global _numpy
    count = _newline_counter(encoding)
    if unit_of(encoding) == 1:
        if _numpy is None:
            try:
                import numpy
            except ImportError:
                numpy = False  # type: ignore[assignment]
            _numpy = numpy
        if _numpy:
            np = _numpy
            value = newline_bytes(encoding)[0]

            scratch: list[Any] = []

            def fast(buf: bytes | bytearray, blocks: list[tuple[int, int]]) -> list[int]:
                n = blocks[-1][1]
                if not scratch or len(scratch[0]) < n:
                    scratch[:] = [np.empty(max(n, SCAN_CHUNK), dtype=bool)]  # type: ignore[attr-defined]
                hits = scratch[0][:n]
                np.equal(np.frombuffer(buf, np.uint8, n), value, out=hits)  # type: ignore[attr-defined]
                return [int(np.count_nonzero(hits[a:b])) for a, b in blocks]  # type: ignore[attr-defined]

            return fast
    return lambda buf, blocks: [count(buf, a, b) for a, b in blocks]


def locate(reader: Reader, encoding: str, newlines: int, index: LineIndex | None,
           cancelled: Callable[[], bool] | None = None) -> tuple[int, int]:
    """The byte offset just after the ``newlines``-th newline (the start of line
    ``newlines``, 0-based), or ``(size, found)`` at EOF with the newlines found.

    Starts from the index's nearest block before the target and adds an entry for
    every whole block it counts past.
    """
    base = len(bom_of(encoding))
    if newlines == 0:
        return base, 0
    unit = unit_of(encoding)
    counts = _block_counter(encoding) if reader.size > SMALL_FILE else \
        (lambda buf, blocks, c=_newline_counter(encoding): [c(buf, a, b) for a, b in blocks])
    find = _newline_finder(encoding)
    pos, seen = base, 0
    if index is not None:
        known = index.before(newlines)
        if known is not None:
            pos, seen = known
    while pos < reader.size:
        if cancelled is not None and cancelled():
            raise InterruptedError
        # read up to a block boundary so every index entry sits on one
        start = pos
        end = min(reader.size, (start // BLOCK) * BLOCK + SCAN_CHUNK)
        buf, length = reader.scan(start, end - start)
        if not length:
            break
        end = start + length
        blocks = []
        block_at = start
        while block_at < end:
            block_end = min(end, (block_at // BLOCK + 1) * BLOCK)
            blocks.append((block_at - start, block_end - start))
            block_at = block_end
        for (a, b), n in zip(blocks, counts(buf, blocks), strict=True):
            if seen + n >= newlines:
                offset = a
                while True:
                    hit = find(buf, offset, b)
                    seen += 1
                    if seen == newlines:
                        return start + hit + unit, seen
                    offset = hit + unit
            seen += n
            at = start + b
            if index is not None and at % BLOCK == 0 and at < reader.size:
                index.add(at, seen)
        pos = end
    if index is not None:
        index.total = seen
    return reader.size, seen


def read_window(reader: Reader, encoding: str, start: int, first: int, limit: int) -> Window:
    """Up to ``limit`` lines from byte ``start`` (line ``first``), at most `WINDOW_MAX` raw
    bytes (the first line always fits unless it is over `LINE_MAX`)."""
    unit = unit_of(encoding)
    if unit == 1 and reader.size == len(reader.head) <= min(LINE_MAX, WINDOW_MAX):
        return _window_in_memory(reader.head, start, first, limit)
    find = _newline_finder(encoding)
    nl = newline_bytes(encoding)
    cr = "\r".encode(_codec(encoding))
    lines: list[bytes] = []
    used = 0
    pos = start
    buf, buf_at = b"", start
    want = 64 << 10
    while len(lines) < limit and pos < reader.size:
        rel = pos - buf_at
        hit = find(buf, rel, len(buf))
        while hit < 0:
            have = len(buf) - rel
            if buf_at + len(buf) >= reader.size or have > LINE_MAX + 2 * unit:
                break
            more = reader.read(buf_at + len(buf), want)
            if not more:
                break
            want = min(want * 2, CHUNK)
            buf, buf_at, rel = buf[rel:] + more, pos, 0
            hit = find(buf, 0, len(buf))
        line_end = buf_at + hit + unit if hit >= 0 else buf_at + len(buf)
        raw = buf[rel:line_end - buf_at]
        body = len(raw)
        if raw.endswith(nl):
            body -= unit
            if raw[:body].endswith(cr):
                body -= unit
        if body > LINE_MAX:
            raise LineTooLong(first + len(lines))
        if lines and used + len(raw) > WINDOW_MAX:
            break
        lines.append(raw)
        used += len(raw)
        pos = line_end
    more = pos < reader.size and bool(reader.read(pos, 1))
    return Window(first, lines, more)


def _window_in_memory(data: bytes, start: int, first: int, limit: int) -> Window:
    """`read_window` of a file held whole in memory (``data``), in a byte-unit encoding,
    no larger than `LINE_MAX` and `WINDOW_MAX`: no line can be too long and the window
    cannot outgrow its limit, so the lines are one split of the bytes, not a search per
    line (the same lines, and ``more`` when bytes follow the last)."""
    parts = data[start:].split(b"\n", limit)
    if len(parts) > limit:  # ``limit`` whole lines; the rest (maybe empty) follows
        return Window(first, [part + b"\n" for part in parts[:limit]], bool(parts[limit]))
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:  # a last line without a newline
        lines.append(parts[-1])
    return Window(first, lines, False)


def _codec(encoding: str) -> str:
    if encoding.startswith("utf-16-le"):
        return "utf-16-le"
    if encoding.startswith("utf-16-be"):
        return "utf-16-be"
    return "ascii"


def count_lines(reader: Reader, encoding: str, index: LineIndex | None) -> int:
    """The file's line count (a final newline starts no extra line)."""
    if index is not None and index.total is not None:
        newlines = index.total
    else:
        _, newlines = locate(reader, encoding, 1 << 62, index)
    bom = len(bom_of(encoding))
    if reader.size <= bom:
        return 0
    last = reader.read(reader.size - unit_of(encoding), unit_of(encoding))
    return newlines + (0 if last == newline_bytes(encoding) else 1)


def index_for(key: tuple[object, ...]) -> LineIndex:
    """The shared sparse index of one file version."""
    return INDEXES.get(key)
