"""read_file: one bounded window of a text file, numbered; it observes the file's version
(files.md §6.1, §5.3)."""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from typing import Any

from callgate import ToolContext, ToolError, ToolResult, Violation
from callgate.files import (
    binary_error,
    io_error,
    is_directory,
    kind_of,
    needs_digest,
    not_found,
    not_regular,
    version_of,
)
from callgate.paths import READ_FLAGS, ResolvedPath
from callgate.text import (
    CHOSEN_ORIGIN,
    FALLBACK_ORIGIN,
    Declaration,
    bom_of,
    declared_kind,
    decode_bytes,
    decode_text,
    detect,
    display,
    display_line,
    has_escapes,
    is_binary,
    undecodable_at,
    usable_codec,
)

from .._common import fail
from .._encoding import choice_conflict, read_note
from .._window import (
    SAMPLE_BYTES,
    SMALL_FILE,
    LineTooLong,
    Reader,
    count_lines,
    index_for,
    locate,
    read_window,
)
from .specs import DEFAULT_LIMIT


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    """An ``encoding`` callgate cannot read and edit in is refused before anything is read."""
    if "encoding" not in args:
        return []
    codec, why = usable_codec(args["encoding"])
    if codec is None:
        return [Violation("/encoding", "encoding", "an encoding callgate can read and edit "
                          f"(gb18030, cp1251, shift_jis, latin-1, ...); {why}")]
    return []

def _read_all(fd: int, size: int) -> bytes:
    chunks, pos = [], 0
    while pos < size:
        chunk = os.pread(fd, size - pos, pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    rp = ctx.files.resolve_read(args["path"])  # confined; the read deny list applies
    offset = args.get("offset", 0)
    limit = args.get("limit", DEFAULT_LIMIT)
    fd, st = _open(ctx, rp)
    try:
        return _read(ctx, rp, fd, st, offset, limit, args.get("encoding"))
    finally:
        os.close(fd)


def _open(ctx: ToolContext, rp: ResolvedPath) -> tuple[int, os.stat_result]:
    """Stat, refuse what is not a regular file, then open: both in the file's held
    directory, never through a symlink (a swap in between fails the call)."""
    ledger = ctx.session.ledger
    try:
        parent, name = rp.parent(lookup=True)  # no inotify event for the watcher
    except IsADirectoryError:  # a root itself
        raise is_directory(rp.display) from None
    except (FileNotFoundError, NotADirectoryError):
        ledger.record_absent(rp.path)
        raise not_found(rp.display) from None
    except OSError as exc:
        raise io_error(rp.display, exc) from None
    with parent:
        try:
            st = parent.stat(name)
        except (FileNotFoundError, NotADirectoryError):
            ledger.record_absent(rp.path)
            raise not_found(rp.display) from None
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        if stat_mod.S_ISDIR(st.st_mode):
            raise is_directory(rp.display)
        if not stat_mod.S_ISREG(st.st_mode):
            raise not_regular(rp.display, what=kind_of(st))
        try:
            return parent.open(name, READ_FLAGS), st
        except FileNotFoundError:
            ledger.record_absent(rp.path)
            raise not_found(rp.display) from None
        except OSError as exc:
            raise io_error(rp.display, exc) from None


def _read(ctx: ToolContext, rp: ResolvedPath, fd: int, st: os.stat_result, offset: int,
          limit: int, asked: str | None = None) -> ToolResult:
    fst = os.fstat(fd)
    if not stat_mod.S_ISREG(fst.st_mode):
        raise not_regular(rp.display, what=kind_of(fst))
    size = fst.st_size
    small = size <= SMALL_FILE
    head = _read_all(fd, size) if small else os.pread(fd, SAMPLE_BYTES, 0)
    complete = size <= SAMPLE_BYTES
    # what is declared for this very version: the user's, or an encoding settled before
    declared = ctx.files.declared_encoding(rp, fst)
    chosen = None
    if asked is not None:
        declared, chosen = _settle(ctx, rp, head, complete, small, asked)
    found = detect(head[:SAMPLE_BYTES], complete=complete, declared=declared)
    encoding = found.encoding
    reader = Reader(fd, size, head)
    meta: dict[str, Any] = {"encoding": encoding, "encoding_basis": found.basis}

    def record() -> bool:
        """Record the version read, unless the file moved while it was being read."""
        if version_of(os.fstat(fd)) != version_of(st) or version_of(fst) != version_of(st):
            return False
        whole = head if small and len(head) == size else None
        snapshot = None
        digest = None
        if whole is not None:
            if not is_binary(whole, encoding):
                # as the write-time checks decode it
                snapshot = _snapshot(whole, complete, encoding, declared)
            if needs_digest(fst):
                digest = hashlib.sha256(whole).hexdigest()
        ctx.session.ledger.record_present(rp, fst, content=whole, snapshot=snapshot,
                                          digest=digest, encoding=chosen)
        return True

    if is_binary(head, encoding):
        record()
        raise binary_error(rp.display, "read_file", "use view_image for images or the shell")
    bom = bom_of(encoding)
    if size == 0 or (size == len(bom) and head.startswith(bom)):
        recorded = record()
        return _result("(empty file)", [], rp, recorded, reader, meta)
    index = None if small else index_for((rp.path, version_of(fst), encoding))
    try:
        start, _found = locate(reader, encoding, offset, index, ctx.cancelled.is_set)
    except InterruptedError:
        raise ToolError("cancelled", "read_file was cancelled while looking for the window; "
                        "nothing was recorded", "cancelled") from None
    if start >= size:
        total = count_lines(reader, encoding, index)
        recorded = record()
        return _result(f"(offset {offset} is past the end: {rp.display} has {total} lines)", [],
                       rp, recorded, reader, meta)
    try:
        window = read_window(reader, encoding, start, offset + 1, limit)
    except LineTooLong as exc:
        raise fail("FS_LINE_TOO_LONG", f"line {exc.line} of {rp.display} exceeds the 1 MiB read "
                   "limit; skip it with offset/limit or inspect it with the shell") from None
    last = window.first + len(window.lines) - 1
    width = len(str(last))
    rows = _clean_rows(window.lines, encoding, window.first, width)
    lossy = False
    if rows is None:
        rows = []
        for number, raw in enumerate(window.lines, window.first):
            text = display_line(decode_bytes(raw, encoding, strip_bom=False))
            if has_escapes(text):
                lossy = True
            rows.append(f"{number:>{width}}→{display(text)}")
    notes = []
    if window.more:
        notes.append(f"[lines {window.first}-{last} shown; more follow: call read_file with "
                     f"offset={last} to continue]")
    if lossy:
        notes.append("[invalid bytes are shown as U+FFFD; edits elsewhere keep them]")
    about = read_note(found, rp.display, head[:SAMPLE_BYTES], complete)
    if about:
        notes.append(about)
    recorded = record()
    meta["lines"] = [window.first, last]
    return _result("\n".join(rows), notes, rp, recorded, reader, meta)


def _snapshot(whole: bytes, complete: bool, encoding: str,
              declared: Declaration | None) -> str:
    """The text of a whole file as `decode_text` makes it, for the observation (the
    write-time checks compare with it). When ``detect`` just found the whole file
    (``complete``: it was its sample) to be UTF-8 with the same declaration, that is its
    strict decoding: not detected a second time."""
    if complete and encoding == "utf-8":
        try:
            return whole.decode("utf-8")
        except UnicodeDecodeError:  # as decode_text would: escapes kept
            pass
    return decode_text(whole, declared).text


#: Encodings whose decoding of a window at once is the lines' decodings one by one: a
#: newline byte is never part of a UTF-8 sequence, so no error or character spans two lines.
_JOINABLE = frozenset({"utf-8", "utf-8-bom", "utf-8-lossy"})


def _clean_rows(lines: list[bytes], encoding: str, first: int, width: int) -> list[str] | None:
    """The numbered rows of a UTF-8 window that decodes cleanly, from one decode of the
    whole window (not one per line); ``None`` when a line holds bytes that are shown as
    U+FFFD (or another encoding): the caller then decodes line by line."""
    if encoding not in _JOINABLE or not lines:
        return None
    text = decode_bytes(b"".join(lines), encoding, strip_bom=False)
    try:
        text.encode("utf-8")  # no surrogate escape: every line displays as decoded
    except UnicodeEncodeError:
        return None
    parts = text.split("\n")
    if parts[-1]:  # a last line without a newline keeps a final "\r" (`display_line`)
        last = parts.pop()
    else:
        last = None
        parts.pop()
    rows = []
    for number, part in enumerate(parts, first):
        if part.endswith("\r"):  # a CRLF line: shown without its "\r", as `display_line`
            part = part[:-1]
        rows.append(f"{number:>{width}}→{part}")
    if last is not None:
        rows.append(f"{first + len(parts):>{width}}→{last}")
    return rows


def _settle(ctx: ToolContext, rp: ResolvedPath, head: bytes, complete: bool, small: bool,
            asked: str) -> tuple[Declaration | None, str | None]:
    """The declaration to read ``rp`` with when the model names its encoding (``asked``),
    and the encoding to record with the version read (``None``: the one it already has).

    Refused, with nothing recorded, when the file's encoding is settled otherwise (its
    bytes, a BOM, the user's declaration, its coding line) or when the bytes read are
    not text in ``asked`` (the whole file when it is read whole, else its first
    `SAMPLE_BYTES`; edits check the rest when they read it whole).
    """
    base = ctx.files.declared_encoding(rp)  # without any earlier choice
    sample = head[:SAMPLE_BYTES]
    natural = detect(sample, complete=complete, declared=base)
    codec, _why = usable_codec(asked)
    assert codec is not None  # validate refused the rest
    kind = declared_kind(codec)
    conflict = choice_conflict(natural, asked, rp.display)
    if conflict:
        raise fail("FS_ENCODING_SETTLED", conflict)
    if natural.settled and natural.origin not in (FALLBACK_ORIGIN, CHOSEN_ORIGIN):
        return base, None  # the encoding it has already
    data = head if small else sample
    bad = undecodable_at(data, kind, complete=small or complete)
    if bad is not None:
        line = data.count(b"\n", 0, bad) + 1
        raise fail("FS_ENCODING_MISMATCH", f"{rp.display} is not {asked}: line {line} holds "
                   f"bytes ({data[bad:bad + 4].hex(' ')}) that {asked} does not read and "
                   "write back as they are; nothing was recorded; read it without encoding, "
                   "or name another")
    fallbacks = base.fallbacks if base is not None else ()
    return Declaration(kind, CHOSEN_ORIGIN, fallbacks), kind


def _result(body: str, notes: list[str], rp: ResolvedPath, recorded: bool, reader: Reader,
            meta: dict[str, Any]) -> ToolResult:
    if not recorded:
        notes.append(f"[{rp.display} changed while it was being read; read it again before "
                     "editing]")
    text = body + ("\n\n" + "\n".join(notes) if notes else "")
    meta["bytes_read"] = reader.bytes_read
    return ToolResult.ok(text, meta)
