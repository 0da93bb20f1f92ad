"""The pure-Python grep engine: the shared walker, ``.gitignore`` via pathspec, PyPI ``regex``.

It answers exactly what the ripgrep engine answers on the parity corpus.
``regex`` runs in V0 mode (``re`` syntax), releases the GIL while it matches
and takes a ``timeout`` per call, so a catastrophic pattern ends at the walk's
deadline instead of hanging a worker thread (``re`` could do neither).

Speed comes from three cheap checks before any regex runs: a NUL in the first
64 KiB (binary), a literal every match must contain (searched in the raw
bytes), and one whole-text search per file with per-line confirmation only
where a match could span lines.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from callgate.paths import READ_FLAGS, ResolvedPath

if TYPE_CHECKING:  # regex (~10 ms) is imported when this engine first searches
    import regex

from callgate_toolkit.walk import walk_files

from ._grep_model import FileHits, GrepRequest
from ._patterns import analyse

HEAD_BYTES = 64 * 1024
BOM_UTF8 = b"\xef\xbb\xbf"
BOM_UTF16 = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


class Timeout(Exception):
    """The walk's deadline passed while a pattern was matching."""


def decode(data: bytes) -> str | None:
    """The text of a file as grep sees it, or ``None`` when it is binary (holds a NUL).

    A UTF-8 BOM is dropped; UTF-16 with a BOM is decoded; invalid UTF-8 reads
    as U+FFFD.
    """
    codec = BOM_UTF16.get(data[:2])
    if codec is not None:
        text = data[2:].decode(codec, "replace")
        return None if "\0" in text else text
    if b"\0" in data:
        return None
    if data.startswith(BOM_UTF8):
        data = data[3:]
    return data.decode("utf-8", "replace")


def open_file(path: str | ResolvedPath, max_bytes: int | None = None) -> int | None:
    """A descriptor of a regular file no larger than ``max_bytes`` (a `ResolvedPath` opens
    beneath its root; never through a final symlink), else ``None``."""
    try:
        fd = path.open(READ_FLAGS) if isinstance(path, ResolvedPath) else \
            os.open(path, READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        st = None
    if st is None or not stat_mod.S_ISREG(st.st_mode) or \
            (max_bytes is not None and st.st_size > max_bytes):
        os.close(fd)
        return None
    return fd


def read_text(path: str | ResolvedPath, required: bytes | None = None, folded: bool = False,
              max_bytes: int | None = None) -> str | None:
    """Read and decode one file; ``None`` when binary, unreadable, over ``max_bytes``, or
    lacking ``required`` (compared case-insensitively in ASCII when ``folded``)."""
    fd = open_file(path, max_bytes)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            utf16 = head[:2] in BOM_UTF16
            if b"\0" in head and not utf16:
                return None
            data = head + fh.read() if len(head) == HEAD_BYTES else head
    except OSError:
        return None
    if required is not None and not utf16 and \
            required not in (data.lower() if folded else data):
        return None
    return decode(data)


def search(req: GrepRequest) -> Iterator[FileHits]:
    """Yield the hits of each file with a matching line, in path order."""
    import regex

    info = analyse(req.pattern, req.ignore_case)
    flags = regex.V0 | regex.MULTILINE | (regex.IGNORECASE if req.ignore_case else 0)
    pattern = regex.compile(req.pattern, flags)
    found = 0
    for rel, path in _files(req):
        if req.cancelled.is_set():
            return
        if time.monotonic() >= req.deadline:
            req.timed_out = True
            return
        text = read_text(path, info.required, info.folded,
                         None if req.is_file else req.max_file_bytes)
        if text is None:
            continue
        hits = FileHits(rel)
        try:
            if info.anchored_to_string:
                _by_line(pattern, text, req, hits, found)
            else:
                _whole_text(pattern, text, req, hits, found)
        except Timeout:
            req.timed_out = True
            if hits.matches:
                _fill(text, req.context, hits)
                yield hits
            return
        if hits.matches:
            found += len(hits.matches)
            _fill(text, req.context, hits)
            yield hits
            if found > req.limit:
                return


def _files(req: GrepRequest) -> Iterator[tuple[str, ResolvedPath]]:
    """The files to search, each confined beneath the request's root (sizes are checked
    when each is read)."""
    if req.is_file:
        yield req.target_rel, req.resolved(req.target_rel)
        return
    for entry in walk_files(req.base or req.root, req.target_rel, skip_hidden=True,
                            ignore=req.rules, stop=req.cancelled.is_set):
        assert entry.resolved is not None
        if req.wanted(entry.rel) and not (req.denied and req.denied(entry.resolved)):
            yield entry.rel, entry.resolved


def _remaining(req: GrepRequest) -> float:
    left = req.deadline - time.monotonic()
    if left <= 0:
        raise Timeout
    return left


def _search(pattern: regex.Pattern[str], text: str, pos: int, req: GrepRequest,
            endpos: int | None = None) -> regex.Match[str] | None:
    try:
        if endpos is None:
            return pattern.search(text, pos, timeout=_remaining(req))
        return pattern.search(text, pos, endpos, timeout=_remaining(req))
    except TimeoutError:
        raise Timeout from None


def _whole_text(pattern: regex.Pattern[str], text: str, req: GrepRequest, hits: FileHits,
                found: int) -> None:
    """One search over the file; a hit that spans lines is confirmed within its line."""
    size = len(text)
    ends_with_newline = text.endswith("\n")
    pos, line_no, counted = 0, 1, 0
    while pos <= size:
        m = _search(pattern, text, pos, req)
        if m is None:
            return
        start = m.start()
        if start == size and (size == 0 or ends_with_newline):
            return
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = size
        if m.end() > line_end and _search(pattern, text[line_start:line_end], 0, req) is None:
            pos = line_end + 1
            continue
        line_no += text.count("\n", counted, line_start)
        counted = line_start
        hits.matches.append(line_no)
        hits.lines[line_no] = text[line_start:line_end]
        if found + len(hits.matches) > req.limit:
            return
        pos = line_end + 1


def _by_line(pattern: regex.Pattern[str], text: str, req: GrepRequest, hits: FileHits,
             found: int) -> None:
    """Line by line: for patterns anchored to the string (``\\A``, ``\\Z``), which rg reads
    as the line's start and end."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    for number, line in enumerate(lines, 1):
        if _search(pattern, line, 0, req) is not None:
            hits.matches.append(number)
            hits.lines[number] = line
            if found + len(hits.matches) > req.limit:
                return


def _fill(text: str, context: int, hits: FileHits) -> None:
    """Add the lines within ``context`` of each match."""
    if not context:
        return
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    for number in list(hits.matches):
        for n in range(max(1, number - context), min(len(lines), number + context) + 1):
            hits.lines.setdefault(n, lines[n - 1])
