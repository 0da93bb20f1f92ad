"""Bounded byte buffers for command output: the last N bytes of a stream, and the
foreground capture's memory guard (shell.md §1.7, §4 storage)."""

from __future__ import annotations

from collections import deque


class ByteTail:
    """The last ``limit`` bytes of a stream, kept as whole chunks (no per-write copying)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        if len(data) >= self.limit:
            self._chunks.clear()
            self._chunks.append(bytes(data[-self.limit:]))
            self._size = self.limit
            return
        self._chunks.append(bytes(data))
        self._size += len(data)
        while self._chunks and self._size - len(self._chunks[0]) >= self.limit:
            self._size -= len(self._chunks.popleft())

    def __len__(self) -> int:
        return min(self._size, self.limit)

    @property
    def start(self) -> int:
        """The stream offset of the first byte still kept."""
        return self.total - len(self)

    def data(self) -> bytes:
        joined = b"".join(self._chunks)
        return joined[-self.limit:] if len(joined) > self.limit else joined


def dropped_marker(count: int) -> str:
    return f"[... {count} bytes dropped by the capture limit ...]"


class Capture:
    """A foreground command's output: whole up to ``max_bytes``, else its first and
    last ``max_bytes / 2`` around a marker. A memory guard, not presentation: the
    core's result shaping decides what the model sees."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._half = max_bytes // 2
        self._head = bytearray()
        self._tail = ByteTail(max_bytes - self._half)
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail.add(data)

    @property
    def dropped(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def text(self) -> str:
        head = bytes(self._head)
        tail = self._tail.data()
        if not self.dropped:
            return decode(head + tail)
        return f"{decode(head)}\n{dropped_marker(self.dropped)}\n{decode(tail)}"


def decode(data: bytes) -> str:
    """Command output as text: UTF-8, undecodable bytes as U+FFFD (shell.md §2)."""
    return data.decode("utf-8", "replace")


def incomplete_utf8_suffix(data: bytes) -> int:
    """How many trailing bytes start a UTF-8 character that has not fully arrived yet."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: keep looking for the lead byte
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else \
            4 if byte & 0xF8 == 0xF0 else 1
        return back if need > back else 0
    return 0
