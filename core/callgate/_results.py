"""The result store: every result kept whole, long ones shown as head + marker + tail.

A model never loses output to a silent cut: an over-limit result is shown
with a marker naming a stable ``result_ref`` and the missing byte range, and
the complete text stays pageable by UTF-8 byte offset (host.md §7).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict

import attrs

from ._errors import ToolError

DEFAULT_MAX_CHARS = 30_000
DEFAULT_STORE_MAX_BYTES = 268_435_456
DEFAULT_PAGE = 16_384
MAX_PAGE = 24_576
_IN_MEMORY_MAX = 64 * 1024
#: Small results stay in memory until they add up to this; later ones go to disk too,
#: so a long session's store is bounded in memory as well as on disk.
DEFAULT_MEMORY_BUDGET = 8 * 1024 * 1024
_FIELD_MAX = 128


@attrs.define
class StoredResult:
    seq: int
    call_id: str
    tool: str
    total_bytes: int
    data: bytes | None = None
    file: str | None = None
    _ref: str | None = None
    _sha: str | None = None

    def load(self) -> bytes:
        data, file = self.data, self.file  # one read each: eviction may clear them meanwhile
        if data is not None:
            return data
        if file is not None:
            try:
                with open(file, "rb") as fh:
                    return fh.read()
            except FileNotFoundError:
                pass
        raise ResultStore._gone(self._ref or f'of tool_call_id "{self.call_id}"')

    @property
    def ref(self) -> str:
        if self._ref is None:
            h = hashlib.sha256()
            h.update(self.call_id.encode())
            h.update(b"\0" + str(self.seq).encode() + b"\0")
            h.update(self.load())
            self._ref = "tr-" + h.hexdigest()[:24]
        return self._ref

    @property
    def sha256(self) -> str:
        if self._sha is None:
            self._sha = hashlib.sha256(self.load()).hexdigest()
        return self._sha


class ResultStore:
    """One session's complete results, bounded in total bytes, oldest evicted first."""

    def __init__(self, directory: str | None = None,
                 max_bytes: int = DEFAULT_STORE_MAX_BYTES,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET) -> None:
        self._directory = directory
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        self.max_bytes = max_bytes
        self.memory_budget = memory_budget
        self.memory_bytes = 0
        self._lock = threading.Lock()
        self._seq = 0
        self._items: OrderedDict[int, StoredResult] = OrderedDict()
        self._evicted: dict[str, set[int]] = {}
        self._total = 0

    def _dir(self) -> str:
        if self._directory is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="callgate-results-")
            self._directory = self._own_dir.name
        os.makedirs(self._directory, mode=0o700, exist_ok=True)
        return self._directory

    def add(self, call_id: str, tool: str, text: str) -> StoredResult:
        """Keep ``text`` whole; returns the entry (its ``ref`` is computed on demand)."""
        data = text.encode("utf-8", "surrogatepass")
        with self._lock:
            self._seq += 1
            item = StoredResult(self._seq, call_id, tool, len(data))
            if len(data) <= _IN_MEMORY_MAX and \
                    self.memory_bytes + len(data) <= self.memory_budget:
                item.data = data
                self.memory_bytes += len(data)
            else:
                path = os.path.join(self._dir(), f"{self._seq:08d}.txt")
                with open(path, "wb") as fh:
                    fh.write(data)
                item.file = path
            self._items[item.seq] = item
            self._total += len(data)
            self._evict()
            return item

    def _evict(self) -> None:
        while self._total > self.max_bytes and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._total -= old.total_bytes
            ref = old.ref  # computed before the bytes go, so later lookups can say "evicted"
            self._evicted.setdefault(old.call_id, set()).add(old.seq)
            self._evicted.setdefault(ref, set())
            if old.file:
                try:
                    os.unlink(old.file)
                except OSError:
                    pass
            if old.data is not None:
                self.memory_bytes -= old.total_bytes
            old.data = None
            old.file = None

    def find(self, tool_call_id: str, result_ref: str | None = None) -> StoredResult:
        """The stored result a model names, or a `ToolError` that says how to name it."""
        with self._lock:
            items = [i for i in self._items.values() if i.call_id == tool_call_id]
            evicted_ref = result_ref is not None and result_ref in self._evicted
            evicted_id = tool_call_id in self._evicted
        if result_ref is not None:
            for item in items:
                if item.ref == result_ref:
                    return item
            # the marker shows call ids cut to 128 bytes; with the ref, the cut id still works
            with self._lock:
                longer = [i for i in self._items.values()
                          if i.call_id != tool_call_id and _field(i.call_id) == tool_call_id]
            for item in longer:
                if item.ref == result_ref:
                    return item
            if evicted_ref:
                raise self._gone(result_ref)
            if items:
                raise ToolError("not_found", f"result_ref {result_ref} does not belong to "
                                f'tool_call_id "{tool_call_id}"; its results are: '
                                + ", ".join(i.ref for i in items), "not_found")
            raise ToolError("not_found", f"no stored result {result_ref} for tool_call_id "
                            f'"{tool_call_id}"', "not_found")
        if not items:
            if evicted_id:
                raise self._gone(f'of tool_call_id "{tool_call_id}"')
            raise ToolError("not_found", f'no stored result for tool_call_id "{tool_call_id}"',
                            "not_found")
        if len(items) > 1:
            refs = ", ".join(i.ref for i in items)
            raise ToolError("tool_error", f'ambiguous tool_call_id "{tool_call_id}"; pass '
                            f"result_ref: {refs}", "ambiguous_tool_call_id")
        return items[0]

    @staticmethod
    def _gone(what: str) -> ToolError:
        return ToolError("not_found", f"result {what} is no longer retained; re-run the tool",
                         "not_found")

    def page(self, tool_call_id: str, result_ref: str | None = None, offset: int = 0,
             limit: int = DEFAULT_PAGE) -> str:
        """A JSON header line and the raw page (host.md §7)."""
        item = self.find(tool_call_id, result_ref)
        data = item.load()
        return page_text(item.ref, data, offset, limit, item.sha256)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def total_bytes(self) -> int:
        return self._total

    def close(self) -> None:
        with self._lock:
            self._items.clear()
            self.memory_bytes = 0
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None


def _char_start(data: bytes, pos: int) -> int:
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos -= 1
    return pos


def page_text(ref: str, data: bytes, offset: int, limit: int, sha: str | None = None) -> str:
    total = len(data)
    if offset < 0:
        raise ToolError("tool_error", f"offset {offset} is negative; use a byte offset from 0 "
                        f"to total_bytes {total}", "offset_out_of_range")
    if offset > total:
        raise ToolError("tool_error", f"offset {offset} is past the end of result {ref} "
                        f"(total_bytes {total})", "offset_out_of_range")
    start = _char_start(data, offset)
    end = min(total, start + limit)
    if end < total:
        end = _char_start(data, end)
    if end <= start and start < total:
        raise ToolError("tool_error", f"limit {limit} is too small for the character at offset "
                        f"{start}; increase limit", "limit_too_small")
    complete = end >= total
    header = {
        "result_ref": ref,
        "offset": start,
        "next_offset": None if complete else end,
        "total_bytes": total,
        "sha256": sha or hashlib.sha256(data).hexdigest(),
        "complete": complete,
    }
    return json.dumps(header) + "\n" + data[start:end].decode("utf-8", "surrogatepass")


def _field(value: str) -> str:
    raw = value.encode()
    if len(raw) <= _FIELD_MAX:
        return value
    return raw[:_FIELD_MAX].decode("utf-8", "ignore")


def truncate(text: str, *, max_chars: int, reserve: int, tool: str, call_id: str,
             item: StoredResult, capability: bool) -> tuple[str, dict[str, object]]:
    """Head + marker line + tail within ``max_chars - reserve`` characters."""
    raw_total = item.total_bytes
    ref = item.ref

    def marker(kept: int, a: int, b: int) -> str:
        if capability:
            call = json.dumps({"action": "call", "capability_id": "session:tool_result",
                               "arguments": {"tool_call_id": _field(call_id),
                                             "result_ref": ref, "offset": a}},
                              separators=(",", ":"))
            how = f"the full result is kept; read the rest with use_capability {call}"
        else:
            how = "re-run the tool with narrower arguments"
        return (f"…[truncated tool={_field(tool)} call_id={_field(call_id)} result_ref={ref} "
                f"original_bytes={raw_total} kept_bytes={kept} missing_bytes={a}-{b} — {how}]…")

    digits = len(str(raw_total))
    est = len(marker(10**digits - 1, 10**digits - 1, 10**digits - 1)) + 2
    budget = max(0, max_chars - reserve - est)
    head_n = budget // 2
    tail_n = budget - head_n
    head = text[:head_n]
    tail = text[len(text) - tail_n:] if tail_n else ""
    a = len(head.encode("utf-8", "surrogatepass"))
    b = raw_total - len(tail.encode("utf-8", "surrogatepass"))
    kept = a + (raw_total - b)
    shown = f"{head}\n{marker(kept, a, b)}\n{tail}"
    meta = {"truncated": True, "result_ref": ref, "original_bytes": raw_total,
            "kept_bytes": kept, "missing_bytes": [a, b]}
    return shown, meta
