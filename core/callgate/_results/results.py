"""The result store: every result kept whole, long ones shown as head + marker + tail.

A model never loses output to a silent cut: an over-limit result is shown
with a marker naming a stable ``result_ref`` and the missing byte range, and
the complete text stays pageable by UTF-8 byte offset (host.md §7).

With a session store, every result is recorded with its call (`_store.journal`): this
process keeps the recent small ones in memory and reads the rest back from the
store, as it does the results of the session's earlier processes (a resumed
session pages what it produced before a restart). Without one (``[sessions] record
= "off"``, or a store made directly), results beyond the memory budget go to spill
files ``<directory>/<store id>-<seq>.txt``: the store id is random per store, so
stores sharing a directory never meet each other's files; the directory is held
open (its last component never through a symlink), each file is created
exclusively without following a link, and read back by name in that held
directory only if it is still the file written.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import tempfile
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

import attrs

from .._fs.confine import READ_FLAGS, HeldDir, open_dir
from .._model.errors import ToolError

log = logging.getLogger("callgate")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL

DEFAULT_MAX_CHARS = 30_000
DEFAULT_STORE_MAX_BYTES = 268_435_456
DEFAULT_PAGE = 16_384
MAX_PAGE = 24_576
_IN_MEMORY_MAX = 64 * 1024
#: Small results stay in memory until they add up to this; later ones go to disk too,
#: so a long session's store is bounded in memory as well as on disk.
DEFAULT_MEMORY_BUDGET = 8 * 1024 * 1024
#: With a session store: how many committed results this process still indexes (newest
#: first); older ones are found in the store. Bounds the per-call memory of a long session.
INDEX_MAX = 1024
#: How many evicted names are remembered to say "no longer retained" (oldest forgotten).
_EVICTED_MAX = 4096
_FIELD_MAX = 128


@attrs.define
class StoredResult:
    """One kept result: its bytes in memory, in a spill file, or in the session store.

    ``end`` links a result to the store row its call's record holds (``row`` once it is
    committed): the bytes in memory may then be let go and are read back from the store,
    and the record itself (the call's whole text and arguments) is let go at once."""

    seq: int
    call_id: str
    tool: str
    total_bytes: int
    data: bytes | None = None
    file: str | None = None
    end: Any = attrs.field(default=None, repr=False)
    stored_row: int | None = None
    _ref: str | None = attrs.field(default=None, alias="ref")
    _sha: str | None = attrs.field(default=None, alias="sha")
    _held: HeldDir | None = attrs.field(default=None, repr=False, alias="held")
    _identity: tuple[int, int] | None = attrs.field(default=None, repr=False, alias="identity")
    _store: Any = attrs.field(default=None, repr=False, alias="store")
    #: the store may drop its complete text ([results] store_max_bytes): the model saw
    #: other text (a truncated result)
    _trimmable: bool = attrs.field(default=True, repr=False, alias="trimmable")

    @property
    def row(self) -> int | None:
        """The store row holding this result, once committed."""
        end = self.end
        if self.stored_row is None and end is not None and end.committed:
            self.stored_row = end.start.row
            self._trimmable = end.shown is not None
            self.end = None  # committed: the record (text, arguments) is the store's now
        return self.stored_row

    @property
    def durable(self) -> bool:
        return self.row is not None

    def load(self) -> bytes:
        data, file = self.data, self.file  # one read each: eviction may clear them meanwhile
        if data is not None:
            return data
        if file is not None:
            try:
                return self._read(file)
            except OSError:
                pass
        row = self.row
        if row is not None and self._store is not None:
            text = self._store.result_text(row)
            if text is not None:
                return text.encode("utf-8", "surrogatepass")
        raise ResultStore._gone(self._ref or f'of tool_call_id "{self.call_id}"')

    def _read(self, file: str) -> bytes:
        """The file's bytes, by name in the held directory, if it is still the one written."""
        held = self._held
        fd = (
            held.open(os.path.basename(file), READ_FLAGS)
            if held is not None
            else os.open(file, READ_FLAGS)
        )
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if self._identity is not None and (st.st_dev, st.st_ino) != self._identity:
                raise FileNotFoundError(errno.ENOENT, "replaced since it was written", file)
            return fh.read()

    @property
    def ref(self) -> str:
        if self._ref is None:
            self._ref = result_ref(self.call_id, self.seq, self.load())
        return self._ref

    @property
    def sha256(self) -> str:
        if self._sha is None:
            self._sha = hashlib.sha256(self.load()).hexdigest()
        return self._sha


class ResultStore:
    """One session's complete results, bounded in total bytes, oldest evicted first.

    With a session store (``store`` and ``session``), every result is recorded with its
    call; this process keeps the recent small ones in memory (at most ``memory_budget``
    bytes once committed) and indexes the newest `INDEX_MAX` committed ones, and reads the
    rest, and the results of earlier processes of the session, back from the store: what
    it holds is bounded whatever the number of calls. Without one,
    results beyond the memory budget go to spill files in ``directory`` (by default a
    private temporary directory), named ``<random store id>-<seq>.txt``, created
    exclusively, never through a symlink, and read back only if still the file written.
    """

    def __init__(
        self,
        directory: str | None = None,
        max_bytes: int = DEFAULT_STORE_MAX_BYTES,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        *,
        store: Any = None,
        session: str | None = None,
        first_seq: int = 0,
        stored_bytes: int = 0,
        trim: Callable[[int], None] | None = None,
    ) -> None:
        self._directory = directory
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        self._held: HeldDir | None = None
        self._finalizer: weakref.finalize | None = None
        self._id = os.urandom(6).hex()
        self._store = store
        self._session = session
        self._trim = trim
        #: the bound of a store trim that is owed: it is sent once the call that caused it is
        #: recorded, so the store counts that call's text too (sent at once it raced the record;
        #: a plain attribute: the pipeline calls `recorded` only when one is owed)
        self.trim_due: int | None = None
        self.max_bytes = max_bytes
        self.memory_budget = memory_budget
        self.memory_bytes = 0
        self._lock = threading.Lock()
        self._seq = first_seq
        self._items: OrderedDict[int, StoredResult] = OrderedDict()
        #: names (call ids, refs) of evicted results, the newest `_EVICTED_MAX`
        self._evicted: OrderedDict[str, set[int]] = OrderedDict()
        self._total = 0
        #: complete texts in the store this process no longer indexes (earlier processes'
        #: truncated results, and this one's beyond `INDEX_MAX`)
        self._stored_bytes = stored_bytes
        #: with a store: results waiting for their record's commit, oldest first; then the
        #: committed ones still indexed, and the small ones of those still holding bytes
        self._unsettled: deque[StoredResult] = deque()
        self._settled: deque[StoredResult] = deque()
        self._small: deque[StoredResult] = deque()

    @property
    def durable(self) -> bool:
        return self._store is not None

    def _dir(self) -> HeldDir:
        """The held results directory, opened (and made) at the first spill."""
        if self._held is not None:
            return self._held
        held = None
        if self._directory is not None:
            try:
                held = _hold_results_dir(self._directory)
            except OSError as exc:
                log.warning(
                    "results: cannot use %s (%s); large results go to a private "
                    "temporary directory instead",
                    self._directory,
                    exc,
                )
        if held is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="callgate-results-")
            self._directory = self._own_dir.name
            held = open_dir(self._directory)
        self._held = held
        self._finalizer = weakref.finalize(self, held.close)
        return held

    def _write(self, item: StoredResult, data: bytes) -> None:
        """Create this store's file for ``item`` exclusively (never through a link)."""
        held = self._dir()
        for _ in range(8):
            name = f"{self._id}-{item.seq:08d}.txt"
            try:
                fd = held.open(name, _CREATE, 0o600)
            except FileExistsError:  # a planted or foreign name: take another store id
                self._id = os.urandom(6).hex()
                continue
            break
        else:
            raise FileExistsError(errno.EEXIST, "no free result file name", held.path)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            held.unlink_quietly(name)
            raise
        os.close(fd)
        item.file = held.join(name)
        item._held = held
        item._identity = (st.st_dev, st.st_ino)

    def add(self, call_id: str, tool: str, text: str) -> StoredResult:
        """Keep ``text`` whole; returns the entry (its ``ref`` is computed on demand). With a
        session store, the caller links it to the call's record (``item.end``)."""
        data = text.encode("utf-8", "surrogatepass")
        if self.trim_due is not None:
            self.recorded()  # an earlier call that was never recorded still owes its trim
        with self._lock:
            self._seq += 1
            item = StoredResult(self._seq, call_id, tool, len(data), store=self._store)
            if self._store is not None:
                item.data = data  # until the record is committed, then within the budget
                self.memory_bytes += len(data)
                self._unsettled.append(item)
            elif (
                len(data) <= _IN_MEMORY_MAX and self.memory_bytes + len(data) <= self.memory_budget
            ):
                item.data = data
                self.memory_bytes += len(data)
            else:
                self._write(item, data)
            self._items[item.seq] = item
            self._total += len(data)
            self._evict()
            return item

    def link(self, item: StoredResult, step: Any, record: Any) -> None:
        """Hand ``item`` from its call's pipeline ``step`` to the call's ``record`` (``None``:
        the call has none, nothing will commit it); under the lock, so an eviction
        meanwhile (which unlinks it) stands. The store's writer thread calls it."""
        with self._lock:
            if item.end is step:
                item.end = record

    def settle(self) -> None:
        """With a session store: let go of what the results whose records are now committed
        no longer need (`_release_memory`). The store's writer thread calls it after each
        commit that carried this session's calls (`Recorder.after_commit`), so the calling
        thread does no settling per call; a result's bytes are held until then."""
        with self._lock:
            self._release_memory()

    def _release_memory(self) -> None:
        """Settle the results whose records are committed (their record let go, `row`), then
        let go of their bytes: big ones at once, small ones once the memory budget is spent,
        oldest first; and forget the oldest committed ones beyond `INDEX_MAX` (the store has
        them). An uncommitted one stays until it is: records commit in order, so the first
        uncommitted one ends the look (the newest may not be linked yet: the pipeline links
        it after `add` returns, on its own thread)."""
        unsettled, newest = self._unsettled, self._seq
        while unsettled:
            item = unsettled[0]
            if item.row is None and (item.end is not None or item.seq == newest):
                break  # not committed yet (or not linked yet)
            unsettled.popleft()
            if self._items.get(item.seq) is not item:
                continue  # evicted meanwhile
            self._settled.append(item)
            if item.total_bytes > _IN_MEMORY_MAX:
                self._drop_data(item)
            elif item.data is not None:
                self._small.append(item)
        small = self._small
        while small and (small[0].data is None or self.memory_bytes > self.memory_budget):
            self._drop_data(small.popleft())
        settled = self._settled
        while len(settled) > INDEX_MAX:
            self._forget(settled.popleft())

    def _drop_data(self, item: StoredResult) -> None:
        if item.data is not None:
            if item._ref is None:  # named while the bytes are here: no store read for it
                item._ref = result_ref(item.call_id, item.seq, item.data)
            item.data = None
            self.memory_bytes -= item.total_bytes

    def _forget(self, item: StoredResult) -> None:
        """Stop indexing a committed result: the store keeps it (and finds it by name)."""
        if self._items.get(item.seq) is not item:
            return
        if item.data is not None:  # not named first (`_drop_data`): its record has the ref,
            item.data = None  # and nothing here looks up what it no longer indexes
            self.memory_bytes -= item.total_bytes
        del self._items[item.seq]
        self._total -= item.total_bytes
        if item._trimmable:
            self._stored_bytes += item.total_bytes

    def _evict(self) -> None:
        evicted = False
        while self._total > self.max_bytes and len(self._items) > 1:
            evicted = True
            _, old = self._items.popitem(last=False)
            self._total -= old.total_bytes
            ref = old.ref  # computed before the bytes go, so later lookups can say "evicted"
            self._note_evicted(old.call_id, old.seq)
            self._note_evicted(ref)
            if old.file and self._held is not None:
                self._held.unlink_quietly(os.path.basename(old.file))
            if old.data is not None:
                self.memory_bytes -= old.total_bytes
            old.data = None
            old.file = None
            old.end = None
            old.stored_row = None
        if self._trim is not None and (
            evicted or self._total + self._stored_bytes > self.max_bytes
        ):
            # the store keeps the newest complete texts up to the same bound (all processes);
            # when only what this process no longer indexes outgrew it, an eighth below the
            # bound, so that the next trim is not one call away. Sent once the newest call's
            # record is on its way (`recorded`), so the store counts that call's text too.
            keep = self.max_bytes if evicted else self.max_bytes - self.max_bytes // 8
            self._stored_bytes = max(0, keep - self._total)  # at most, besides the indexed
            self.trim_due = keep if self.trim_due is None else min(self.trim_due, keep)

    def recorded(self) -> None:
        """The newest call's record has been submitted: send the store trim it owes, which
        the recorder then applies after that record."""
        keep, self.trim_due = self.trim_due, None
        if keep is not None and self._trim is not None:
            self._trim(keep)

    def _note_evicted(self, name: str, seq: int | None = None) -> None:
        seqs = self._evicted.pop(name, set())
        if seq is not None:
            seqs.add(seq)
        self._evicted[name] = seqs
        while len(self._evicted) > _EVICTED_MAX:
            self._evicted.popitem(last=False)

    def _from_store(
        self, rows: list[tuple[int, str, int, str, bool]], call_id: str, known: list[StoredResult]
    ) -> list[StoredResult]:
        """Rows of the store this process does not hold (earlier processes, other members)."""
        held = {i.row for i in known} | {
            i.ref for i in known if i.row is None and i.data is not None
        }
        out = []
        for row, ref, size, sha, retained in rows:
            if row in held or ref in held:
                continue
            if ref in self._evicted:
                retained = False  # dropped here; the store's copy is on its way out too
            item = StoredResult(
                0,
                call_id,
                "",
                size,
                stored_row=row if retained else None,
                ref=ref,
                sha=sha,
                store=self._store,
            )
            out.append(item)
        return out

    def find(self, tool_call_id: str, result_ref: str | None = None) -> StoredResult:
        """The stored result a model names, or a `ToolError` that says how to name it."""
        with self._lock:
            items = [i for i in self._items.values() if i.call_id == tool_call_id]
            evicted_ref = result_ref is not None and result_ref in self._evicted
            evicted_id = tool_call_id in self._evicted
        if self._store is not None:
            items += self._from_store(
                self._store.call_results(self._session, tool_call_id), tool_call_id, items
            )
        gone = [i for i in items if i.data is None and i.file is None and i.row is None]
        items = [i for i in items if i not in gone]
        if result_ref is not None:
            for item in items:
                if item.ref == result_ref:
                    return item
            # the marker shows call ids cut to 128 bytes; with the ref, the cut id still works
            with self._lock:
                longer = [
                    i
                    for i in self._items.values()
                    if i.call_id != tool_call_id and _field(i.call_id) == tool_call_id
                ]
            for item in longer:
                if item.ref == result_ref:
                    return item
            if self._store is not None:
                found = self._store.result_by_ref(self._session, result_ref)
                if found is not None and _field(found[1]) == tool_call_id:
                    if not found[4] or evicted_ref:  # dropped here: the store's copy follows
                        raise self._gone(result_ref)
                    return StoredResult(
                        0,
                        found[1],
                        "",
                        found[2],
                        stored_row=found[0],
                        ref=result_ref,
                        sha=found[3],
                        store=self._store,
                    )
            if evicted_ref or any(i._ref == result_ref for i in gone):
                raise self._gone(result_ref)
            if items:
                raise ToolError(
                    "not_found",
                    f"result_ref {result_ref} does not belong to "
                    f'tool_call_id "{tool_call_id}"; its results are: '
                    + ", ".join(i.ref for i in items),
                    "not_found",
                )
            raise ToolError(
                "not_found",
                f'no stored result {result_ref} for tool_call_id "{tool_call_id}"',
                "not_found",
            )
        if not items:
            if evicted_id or gone:
                raise self._gone(f'of tool_call_id "{tool_call_id}"')
            raise ToolError(
                "not_found", f'no stored result for tool_call_id "{tool_call_id}"', "not_found"
            )
        if len(items) > 1:
            refs = ", ".join(i.ref for i in items)
            raise ToolError(
                "tool_error",
                f'ambiguous tool_call_id "{tool_call_id}"; pass result_ref: {refs}',
                "ambiguous_tool_call_id",
            )
        return items[0]

    @staticmethod
    def _gone(what: str) -> ToolError:
        return ToolError(
            "not_found", f"result {what} is no longer retained; re-run the tool", "not_found"
        )

    def page(
        self,
        tool_call_id: str,
        result_ref: str | None = None,
        offset: int = 0,
        limit: int = DEFAULT_PAGE,
    ) -> str:
        """A JSON header line and the raw page (host.md §7)."""
        item = self.find(tool_call_id, result_ref)
        data = item.load()
        return page_text(item.ref, data, offset, limit, item.sha256)

    def listing(self) -> list[StoredResult]:
        """The results this process still holds, oldest first (for a server that lists
        them, e.g. as MCP resources); each one's ``ref`` names it for `by_ref`."""
        with self._lock:
            items = list(self._items.values())
        return [i for i in items if i.data is not None or i.file is not None or i.row is not None]

    def by_ref(self, result_ref: str) -> StoredResult | None:
        """The stored result named ``result_ref`` (also one an earlier process of a joined
        session recorded), or ``None`` when there is none or it is no longer retained."""
        for item in self.listing():
            if item.ref == result_ref:
                return item
        if self._store is not None:
            found = self._store.result_by_ref(self._session, result_ref)
            if found is not None and found[4]:
                return StoredResult(
                    0,
                    found[1],
                    "",
                    found[2],
                    stored_row=found[0],
                    ref=result_ref,
                    sha=found[3],
                    store=self._store,
                )
        return None

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
            if self._finalizer is not None:
                self._finalizer()
                self._finalizer = None
            self._held = None
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None


def _hold_results_dir(directory: str) -> HeldDir:
    """``directory`` held: its parent as named (the integrator's session directory), the
    last component made if missing (0700) and never through a symlink."""
    parent, name = os.path.split(os.path.abspath(directory))
    os.makedirs(parent, exist_ok=True)
    with open_dir(parent) as held_parent:
        try:
            held_parent.mkdir(name, 0o700)
        except FileExistsError:
            pass
        return held_parent.sub(name)


def result_ref(call_id: str, seq: int, data: bytes) -> str:
    """A stored result's stable name: its call id, number and bytes, hashed."""
    h = hashlib.sha256()
    h.update(call_id.encode("utf-8", "surrogatepass"))
    h.update(b"\0" + str(seq).encode() + b"\0")
    h.update(data)
    return "tr-" + h.hexdigest()[:24]


def _char_start(data: bytes, pos: int) -> int:
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos -= 1
    return pos


def page_text(ref: str, data: bytes, offset: int, limit: int, sha: str | None = None) -> str:
    total = len(data)
    if offset < 0:
        raise ToolError(
            "tool_error",
            f"offset {offset} is negative; use a byte offset from 0 to total_bytes {total}",
            "offset_out_of_range",
        )
    if offset > total:
        raise ToolError(
            "tool_error",
            f"offset {offset} is past the end of result {ref} (total_bytes {total})",
            "offset_out_of_range",
        )
    start = _char_start(data, offset)
    end = min(total, start + limit)
    if end < total:
        end = _char_start(data, end)
    if end <= start and start < total:
        raise ToolError(
            "tool_error",
            f"limit {limit} is too small for the character at offset {start}; increase limit",
            "limit_too_small",
        )
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


def truncate(
    text: str,
    *,
    max_chars: int,
    reserve: int,
    tool: str,
    call_id: str,
    item: StoredResult,
    pager: Callable[[str, str, int], str] | None = None,
) -> tuple[str, dict[str, object]]:
    """Head + marker line + tail within ``max_chars - reserve`` characters; ``pager(call_id,
    result_ref, offset)`` says how to read the rest (a proxy's ``ProxyRoute.result_page``)."""
    raw_total = item.total_bytes
    ref = item.ref

    def marker(kept: int, a: int, b: int) -> str:
        if pager is not None:
            how = pager(_field(call_id), ref, a)
        else:
            how = "re-run the tool with narrower arguments"
        return (
            f"…[truncated tool={_field(tool)} call_id={_field(call_id)} result_ref={ref} "
            f"original_bytes={raw_total} kept_bytes={kept} missing_bytes={a}-{b} — {how}]…"
        )

    digits = len(str(raw_total))
    est = len(marker(10**digits - 1, 10**digits - 1, 10**digits - 1)) + 2
    budget = max(0, max_chars - reserve - est)
    head_n = budget // 2
    tail_n = budget - head_n
    head = text[:head_n]
    tail = text[len(text) - tail_n :] if tail_n else ""
    a = len(head.encode("utf-8", "surrogatepass"))
    b = raw_total - len(tail.encode("utf-8", "surrogatepass"))
    kept = a + (raw_total - b)
    shown = f"{head}\n{marker(kept, a, b)}\n{tail}"
    meta = {
        "truncated": True,
        "result_ref": ref,
        "original_bytes": raw_total,
        "kept_bytes": kept,
        "missing_bytes": [a, b],
    }
    return shown, meta
