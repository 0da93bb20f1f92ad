"""The per-session observation ledger (files.md §5).

A structured mutation may only replace a file version this session has seen.
An entry records the version a successful read (or the session's own write)
observed; the host gate compares it with the file as it is now, so any change
made elsewhere (an editor, a shell command, another session) is caught.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .confine import READ_FLAGS
from .workspace import ResolvedPath

Version = tuple[int, int, int, int, int, int, int, int, int]
Identity = tuple[int, int]

#: Versions younger than this were the only ones hashed once; kept for callers.
DIGEST_WINDOW_NS = 2_000_000_000
#: Versions up to this size are hashed when recorded and compared by bytes at the gate.
DIGEST_MAX_BYTES = 1 << 20
SNAPSHOT_MAX_BYTES = 1 << 20
SNAPSHOT_BUDGET = 32 << 20
#: Bytes of recorded versions kept per session, so the gate compares bytes instead of hashing.
CONTENT_BUDGET = 8 << 20


def version_of(st: os.stat_result) -> Version:
    """Everything one ``stat`` can prove about a file version (files.md §5.2)."""
    return (
        st.st_size,
        st.st_mode,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_dev,
        st.st_ino,
        st.st_nlink,
        st.st_uid,
        st.st_gid,
    )


def identity_of(st: os.stat_result) -> Identity:
    return (st.st_dev, st.st_ino)


def open_to_read(path: str | os.PathLike[str]) -> int:
    """A descriptor to read ``path``: a `ResolvedPath` opens beneath its held root, a string
    by name; a final symlink is never followed."""
    if isinstance(path, ResolvedPath):
        return path.open(READ_FLAGS)
    return os.open(path, READ_FLAGS)


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    fd = open_to_read(path)
    try:
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    finally:
        os.close(fd)
    return h.hexdigest()


def read_version(
    path: str | os.PathLike[str], st: os.stat_result | None, n: int
) -> tuple[bytes, bool]:
    """Up to ``n + 1`` bytes of ``path`` (so a longer file shows), and whether the open
    handle was the version ``st`` describes before and after the read (raises `OSError`)."""
    fd = open_to_read(path)
    try:
        same = st is not None and version_of(os.fstat(fd)) == version_of(st)
        chunks = []
        want = n + 1
        while want > 0 and (chunk := os.read(fd, want)):
            chunks.append(chunk)
            want -= len(chunk)
        same = same and version_of(os.fstat(fd)) == version_of(st)  # type: ignore[arg-type]
    finally:
        os.close(fd)
    return b"".join(chunks), same


def same_bytes(path: str | os.PathLike[str], content: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``content`` (read, not hashed)."""
    return read_version(path, None, len(content))[0] == content


def needs_digest(st: os.stat_result, now_ns: int | None = None) -> bool:
    """Whether a version is hashed when it is recorded: every regular file up to
    `DIGEST_MAX_BYTES`, whatever its age.

    ``stat`` cannot prove the bytes: a rewrite within the clock's granularity keeps the
    times, and an mmap writer changes bytes with neither size nor times moving (the kernel
    stamps a mapped page's first write only, until writeback cleans it). Only young
    versions used to be hashed, so such a change to a file read more than two seconds
    earlier was overwritten without notice. ``now_ns`` is kept for callers of the old
    signature and no longer matters.
    """
    return stat_mod.S_ISREG(st.st_mode) and st.st_size <= DIGEST_MAX_BYTES


@attrs.frozen
class Present:
    """The session saw this version of the file. ``encoding``: the encoding the model
    settled for this version (read_file's ``encoding`` argument), which every decoding
    of this version, and the session's own writes of it, keep."""

    version: Version
    identity: Identity
    digest: str | None = None
    encoding: str | None = None


@attrs.frozen
class Absent:
    """The session saw that nothing was at this path."""


Entry = Present | Absent
ABSENT = Absent()


def entry_to_json(entry: Entry) -> dict[str, Any]:
    """A ledger entry as the session store keeps it."""
    if isinstance(entry, Absent):
        return {"absent": True}
    out = {"version": list(entry.version), "identity": list(entry.identity), "digest": entry.digest}
    if entry.encoding is not None:
        out["encoding"] = entry.encoding
    return out


def entry_from_json(data: Any) -> Entry | None:
    """The entry ``entry_to_json`` made, or ``None`` for anything else."""
    if not isinstance(data, dict):
        return None
    if data.get("absent") is True:
        return ABSENT
    version, identity, digest = data.get("version"), data.get("identity"), data.get("digest")
    encoding = data.get("encoding")
    if not (
        isinstance(version, list)
        and len(version) == 9
        and isinstance(identity, list)
        and len(identity) == 2
        and all(isinstance(v, int) for v in version + identity)
        and (digest is None or isinstance(digest, str))
        and (encoding is None or isinstance(encoding, str))
    ):
        return None
    return Present(tuple(version), tuple(identity), digest, encoding)  # type: ignore[arg-type]


class ObservationLedger:
    """One session's observations, keyed by file identity and by canonical path.

    Thread-safe; child sessions start with an empty one. ``listener`` (the session's
    journal) hears of every change, so a durable session's ledger survives the process;
    `restore` puts stored entries back (each is checked against the file, as any entry
    is, when a mutation is gated).
    """

    def __init__(self, listener: Callable[[str, Entry | None], None] | None = None) -> None:
        self.listener = listener
        self._lock = threading.Lock()
        self._by_path: dict[str, Entry] = {}
        self._path_of_identity: dict[Identity, str] = {}
        self._snapshots: OrderedDict[Identity, tuple[str, int]] = OrderedDict()  # text, size
        self._snapshot_bytes = 0
        # the bytes a young version's digest was taken from: checking the file against
        # them is a read and a compare, where the digest costs a read and a SHA-256
        self._contents: OrderedDict[Identity, tuple[Version, str, bytes]] = OrderedDict()
        self._content_bytes = 0

    # --- recording ---------------------------------------------------

    def record_present(
        self,
        path: str | os.PathLike[str],
        st: os.stat_result,
        *,
        digest: str | None = None,
        content: bytes | None = None,
        snapshot: str | None = None,
        encoding: str | None = None,
    ) -> Present:
        """Record that the session observed ``path`` at the version ``st`` describes.

        When the version is young enough to need a digest, it is taken from ``content``
        (the bytes just read or written) or, failing that, from the file (``path`` a
        `ResolvedPath`: read beneath its root). ``content`` given with a ``digest`` must
        be the bytes that digest was taken from. The key is the canonical path.
        ``encoding`` is the one the model settled for this version (`Present`); seeing
        the same version again without one keeps it.
        """
        source, path = path, os.fspath(path)
        whole = content is not None and len(content) == st.st_size
        if digest is None and needs_digest(st):
            if whole:
                assert content is not None
                digest = hashlib.sha256(content).hexdigest()
            else:
                try:
                    digest = sha256_file(source)
                except OSError:
                    digest = None
        with self._lock:
            old = self._by_path.get(path)
            if (
                encoding is None
                and isinstance(old, Present)
                and old.digest == digest
                and old.version == version_of(st)
                and old.identity == identity_of(st)
            ):
                encoding = old.encoding
            entry = Present(version_of(st), identity_of(st), digest, encoding)
            if isinstance(old, Present) and old.identity != entry.identity:
                self._drop_snapshot(old.identity)
                self._drop_content(old.identity)
                if self._path_of_identity.get(old.identity) == path:
                    del self._path_of_identity[old.identity]
            self._by_path[path] = entry
            self._path_of_identity[entry.identity] = path
            if snapshot is not None:
                self._put_snapshot(entry.identity, snapshot)
            else:
                self._drop_snapshot(entry.identity)
            if digest is not None and whole:
                assert content is not None
                self._put_content(entry, content)
            else:
                self._drop_content(entry.identity)
        if self.listener is not None and old != entry:
            self.listener(path, entry)
        return entry

    def record_absent(self, path: str) -> None:
        """Record that the session saw nothing at ``path``."""
        with self._lock:
            self._unlink(path)
            old = self._by_path.get(path)
            self._by_path[path] = ABSENT
        if self.listener is not None and not isinstance(old, Absent):
            self.listener(path, ABSENT)

    def forget(self, path: str) -> None:
        """Drop what the session knew about ``path`` (its next state is unseen)."""
        with self._lock:
            self._unlink(path)
            old = self._by_path.pop(path, None)
        if self.listener is not None and old is not None:
            self.listener(path, None)

    def restore(self, entries: Mapping[str, Any]) -> int:
        """Put back entries a durable session stored (`entry_to_json` values); returns how
        many were usable. Nothing is trusted: the gate checks each against the file."""
        restored = 0
        with self._lock:
            for path, data in entries.items():
                entry = entry_from_json(data)
                if entry is None:
                    continue
                self._by_path[path] = entry
                if isinstance(entry, Present):
                    self._path_of_identity[entry.identity] = path
                restored += 1
        return restored

    def _unlink(self, path: str) -> None:
        old = self._by_path.get(path)
        if isinstance(old, Present) and self._path_of_identity.get(old.identity) == path:
            del self._path_of_identity[old.identity]
            self._drop_snapshot(old.identity)
            self._drop_content(old.identity)

    def move(
        self,
        source: str | os.PathLike[str],
        destination: str | os.PathLike[str],
        st: os.stat_result,
    ) -> None:
        """A host move: the source becomes Absent, the destination Present (snapshot kept)."""
        source = os.fspath(source)
        with self._lock:
            old = self._by_path.get(source)
            kept = self._snapshots.get(old.identity) if isinstance(old, Present) else None
            snap = kept[0] if kept is not None else None
            digest = old.digest if isinstance(old, Present) else None
            encoding = old.encoding if isinstance(old, Present) else None
        self.record_absent(source)
        self.record_present(
            destination,
            st,
            snapshot=snap,
            digest=digest if digest and needs_digest(st) else None,
            encoding=encoding,
        )

    # --- reading ---------------------------------------------------

    def lookup(self, path: str, st: os.stat_result | None = None) -> Entry | None:
        """The entry for a file: by identity first (any name of it), then by path."""
        with self._lock:
            if st is not None:
                other = self._path_of_identity.get(identity_of(st))
                if other is not None:
                    entry = self._by_path.get(other)
                    if isinstance(entry, Present) and entry.identity == identity_of(st):
                        return entry
            return self._by_path.get(path)

    def entry(self, path: str) -> Entry | None:
        """The entry recorded under the canonical ``path`` (no identity lookup)."""
        with self._lock:
            return self._by_path.get(path)

    def snapshot(self, entry: Present) -> str | None:
        with self._lock:
            kept = self._snapshots.get(entry.identity)
            if kept is None:
                return None
            self._snapshots.move_to_end(entry.identity)
            return kept[0]

    def content(self, entry: Present) -> bytes | None:
        """The bytes ``entry``'s digest was taken from, if still kept (else ``None``)."""
        if entry.digest is None:
            return None
        with self._lock:
            kept = self._contents.get(entry.identity)
            if kept is None or kept[0] != entry.version or kept[1] != entry.digest:
                return None
            self._contents.move_to_end(entry.identity)
            return kept[2]

    def paths(self) -> dict[str, Entry]:
        with self._lock:
            return dict(self._by_path)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_path)

    # --- snapshots (for stale detail), LRU within a budget ------------------------

    def _put_snapshot(self, identity: Identity, text: str) -> None:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))
        if size > SNAPSHOT_MAX_BYTES:
            self._drop_snapshot(identity)
            return
        self._drop_snapshot(identity)
        self._snapshots[identity] = (text, size)
        self._snapshot_bytes += size
        while self._snapshot_bytes > SNAPSHOT_BUDGET and self._snapshots:
            _, (_, dropped) = self._snapshots.popitem(last=False)
            self._snapshot_bytes -= dropped

    def _drop_snapshot(self, identity: Identity) -> None:
        kept = self._snapshots.pop(identity, None)
        if kept is not None:
            self._snapshot_bytes -= kept[1]

    # --- young versions' bytes (for the gate's digest check), LRU within a budget ------

    def _put_content(self, entry: Present, data: bytes) -> None:
        self._drop_content(entry.identity)
        if entry.digest is None or len(data) > CONTENT_BUDGET:
            return
        self._contents[entry.identity] = (entry.version, entry.digest, data)
        self._content_bytes += len(data)
        while self._content_bytes > CONTENT_BUDGET and self._contents:
            _, (_, _, dropped) = self._contents.popitem(last=False)
            self._content_bytes -= len(dropped)

    def _drop_content(self, identity: Identity) -> None:
        kept = self._contents.pop(identity, None)
        if kept is not None:
            self._content_bytes -= len(kept[2])


def matches(
    entry: Entry | None,
    st: os.stat_result,
    path: str | os.PathLike[str],
    content: bytes | None = None,
) -> bool:
    """True when ``entry`` proves the session saw exactly the version ``st`` describes.

    ``content``, the bytes the entry's digest was taken from (`ObservationLedger.content`),
    makes the digest check a byte comparison: the same verdict, without hashing.
    """
    if not isinstance(entry, Present):
        return False
    if entry.version != version_of(st):
        return False
    if entry.digest is not None:
        try:
            if content is not None:
                return same_bytes(path, content)
            return sha256_file(path) == entry.digest
        except OSError:
            return False
    return True
