"""The observed-file API plugins use (``ctx.files``): reads that record observations,
and the read-once / double-check / atomic-publish / record sequence every structured
mutation follows (files.md §4, §5.5, §6 steps 6-12).

A mutating tool declares its path arguments (``mutates_paths``); the host gate
has then confined, leased, stat'ed and checked them (``ctx.gated``). The tool::

    source = ctx.files.load(ctx.gated["path"], tool="edit_file")   # size, read, binary
    new_text = ...                                                  # compute the change
    changed = ctx.files.publish(source, source.encode(new_text))    # double check + replace

``publish`` is a no-op (and records the current version) when the bytes are
the same, so a tool answers "nothing changed" without writing.
"""

from __future__ import annotations

import os
import stat as stat_mod

import attrs

from .._fs.atomic import FileChanged, create_file, replace_file, replace_in
from .._fs.confine import READ_FLAGS, HeldDir
from .._fs.file_lease import WriterOpen
from .._fs.observations import SNAPSHOT_MAX_BYTES, Present, version_of
from .._fs.workspace import ResolvedPath
from .._model.errors import ToolError
from .._text.textio import (
    CHOSEN_ORIGIN,
    Declaration,
    DecodedText,
    decode_text,
    encode_text,
    is_binary,
)
from .gate import (
    GatedPath,
    changed_while_applying,
    io_error,
    is_directory,
    kind_of,
    not_found,
    not_regular,
    open_for_writing,
)
from .policy import ReadDenylist
from .scope import FileScope

MIB = 1 << 20


def _mib(n: int) -> str:
    value = n / MIB
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def too_large(display: str, size: int, limit: int, *, content: bool = False) -> ToolError:
    """``FS_TOO_LARGE`` for a file (or new content) above the edit limit."""
    what = f"the new content for {display} is" if content else f"{display} is"
    return ToolError(
        "tool_error",
        f"FS_TOO_LARGE: {what} {_mib(size)} MiB, above the "
        f"{_mib(limit)} MiB edit limit; use the shell or raise "
        "files.max_edit_bytes",
        "FS_TOO_LARGE",
    )


def binary_error(display: str, tool: str, recovery: str | None = None) -> ToolError:
    """``FS_BINARY``; ``recovery`` defaults to the advice for a mutation."""
    if recovery is None:
        recovery = f"{tool} edits text files only; use the shell (move_file can still move it)"
    return ToolError("tool_error", f"FS_BINARY: {display} looks binary; {recovery}", "FS_BINARY")


@attrs.frozen
class SourceFile:
    """A mutation's source, read once: its bytes, the stat of the open handle (equal to the
    gated path's), and the text (``None`` for binary or undecoded reads)."""

    resolved: ResolvedPath
    stat: os.stat_result
    data: bytes
    decoded: DecodedText | None = None

    @property
    def path(self) -> str:
        return self.resolved.path

    @property
    def display(self) -> str:
        return self.resolved.display

    @property
    def text(self) -> str:
        assert self.decoded is not None, "the source was loaded without decoding"
        return self.decoded.text

    @property
    def encoding(self) -> str:
        return self.decoded.encoding if self.decoded is not None else "utf-8"

    @property
    def version(self) -> tuple[int, ...]:
        return version_of(self.stat)

    def encode(self, text: str) -> bytes:
        """``text`` in this file's encoding, BOM and byte order (endings are the caller's)."""
        return encode_text(text, self.encoding)

    def encode_piece(self, text: str) -> bytes:
        """A piece of text for the middle of this file: its encoding, no BOM."""
        return encode_text(text, self.encoding, bom=False)


def _chosen(source: SourceFile, data: bytes, text: str | None) -> str | None:
    """The encoding the model settled for ``source``'s version, when its text was decoded
    in it and the new bytes ``data`` are in it too (``text`` encodes to them; without a
    text, an edit's bytes, which are always in the source's encoding)."""
    decoded = source.decoded
    if decoded is None or decoded.origin != CHOSEN_ORIGIN:
        return None
    if text is not None and encode_text(text, decoded.encoding) != data:
        return None  # written in another encoding (write_file following a coding line)
    return decoded.encoding


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return version_of(a) == version_of(b)


def _same_content(fd: int, data: bytes) -> bool:
    """Whether the file behind ``fd`` holds exactly ``data`` (one buffered read of one byte
    more than ``data``: measured faster than ``os.read`` or chunked compares on large files,
    whose fresh buffers glibc hands back page-faulting)."""
    with os.fdopen(fd, "rb", closefd=False) as fh:
        return fh.read(len(data) + 1) == data


class FileAccess:
    """Observed reads and atomic writes inside one session's workspace (its `FileScope`)."""

    def __init__(self, scope: FileScope) -> None:
        #: the session's workspace, ledger and the host's ``[files]`` policy
        self.scope = scope

    @property
    def denylist(self) -> ReadDenylist | None:
        """The read deny list when ``[files] read_denylist`` is on, else ``None``."""
        return self.scope.denylist

    def denied(self, path: str | os.PathLike[str]) -> bool:
        """Whether the read deny list (when on) hides ``path`` (see `ReadDenylist.denies`).
        Readers answer a denied path exactly as a missing one and record nothing."""
        return self.scope.denied(path)

    def resolve_read(self, path: str | os.PathLike[str]) -> ResolvedPath:
        """`Workspace.resolve` for a read, with the deny list applied: a denied path is
        ``FS_NOT_FOUND``, exactly like a missing one."""
        rp = self.scope.workspace.resolve(path)
        if self.denied(rp):
            raise not_found(rp.display)
        return rp

    @property
    def max_edit_bytes(self) -> int:
        """``[files] max_edit_bytes`` (64 MiB unless configured)."""
        return self.scope.policy.max_edit_bytes

    def declared_encoding(
        self, path: ResolvedPath | str, st: os.stat_result | None = None
    ) -> Declaration | None:
        """What is declared about a (canonical) path's encoding: its ``[files] encodings``
        entry and the user's fallback list; with ``st``, also the encoding the model
        settled for that very version (`chosen_encoding`). Every decoding of the file
        uses it (see `decode_text`)."""
        canonical = path.path if isinstance(path, ResolvedPath) else path
        chosen = self.chosen_encoding(canonical, st) if st is not None else None
        return self.scope.declared(canonical, chosen)

    def chosen_encoding(self, path: ResolvedPath | str, st: os.stat_result) -> str | None:
        """The encoding the model settled (read_file's ``encoding``) for the version of
        ``path`` that ``st`` describes, if this session observed that version with one."""
        canonical = path.path if isinstance(path, ResolvedPath) else path
        entry = self.scope.ledger.lookup(canonical, st)
        if isinstance(entry, Present) and entry.version == version_of(st):
            return entry.encoding
        return None

    # --- the mutation sequence (after the host gate) -----------------------------------

    def load(
        self, gated: GatedPath, *, tool: str, decode: bool = True, max_bytes: int | None = None
    ) -> SourceFile:
        """Steps 6-8: the size limit, one read (bytes and the handle's stat, which must
        still be the gated version), and the binary check; then decode the whole file."""
        rp, st = gated.resolved, gated.stat
        if st is None or self.denied(rp):
            raise not_found(rp.display)
        limit = self.max_edit_bytes if max_bytes is None else max_bytes
        if st.st_size > limit:
            raise too_large(rp.display, st.st_size, limit)
        if gated.content is not None and len(gated.content) == st.st_size:
            # the gate has just read this very version (its handle's stat before and after
            # the read was ``st``): that was this mutation's one read
            return self._source(rp, st, gated.content, decode, tool, self.declared_encoding(rp, st))
        try:
            fd = rp.open(READ_FLAGS)
        except FileNotFoundError:
            raise changed_while_applying(rp.display) from None
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        try:
            before = os.fstat(fd)
            if not stat_mod.S_ISREG(before.st_mode) or not _same_file(before, st):
                raise changed_while_applying(rp.display)
            chunks = []
            while chunk := os.read(fd, max(before.st_size + 1, 1 << 16)):
                chunks.append(chunk)
            data = b"".join(chunks)
            if not _same_file(os.fstat(fd), st) or len(data) != st.st_size:
                raise changed_while_applying(rp.display)
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        finally:
            os.close(fd)
        return self._source(rp, st, data, decode, tool, self.declared_encoding(rp, st))

    @staticmethod
    def _source(
        rp: ResolvedPath,
        st: os.stat_result,
        data: bytes,
        decode: bool,
        tool: str,
        declared: Declaration | None = None,
    ) -> SourceFile:
        if not decode:
            return SourceFile(rp, st, data)
        decoded = decode_text(data, declared)
        if is_binary(data, decoded.encoding):
            raise binary_error(rp.display, tool)
        return SourceFile(rp, st, data, decoded)

    def double_check(self, source: SourceFile, directory: HeldDir | None = None) -> None:
        """§5.5: just before publishing, the path must still be the version read, and hold
        the bytes read (compared directly: stronger than comparing digests, and cheaper).

        ``directory`` is the held parent the publish renames in (else the path is
        resolved beneath its root again), so the check sees the entry the rename replaces.
        """
        try:
            if directory is not None:
                name = os.path.basename(source.path)
                now = directory.stat(name)
                fd = directory.open(name, READ_FLAGS) if _same_file(now, source.stat) else -1
            else:
                now = source.resolved.stat()
                fd = source.resolved.open(READ_FLAGS) if _same_file(now, source.stat) else -1
        except OSError:
            raise changed_while_applying(source.display) from None
        if fd < 0:
            raise changed_while_applying(source.display)
        try:
            self.double_check_held(source, fd, now)
        finally:
            os.close(fd)

    def double_check_held(self, source: SourceFile, fd: int, held: os.stat_result) -> None:
        """`double_check` on the descriptor the publish holds (and leases) on the file it
        replaces, opened by name in the held parent just before (``held`` is its stat): the
        same verdict, without opening and stat-ing the file a second time (the comparison
        both make)."""
        if not _same_file(held, source.stat):
            raise changed_while_applying(source.display)
        try:
            same = _same_content(fd, source.data) and _same_file(os.fstat(fd), source.stat)
        except OSError:
            raise changed_while_applying(source.display) from None
        if not same:
            raise changed_while_applying(source.display)

    def publish(self, source: SourceFile, data: bytes, *, text: str | None = None) -> bool:
        """Steps 10-12: same bytes → nothing written (returns ``False``); else replace the
        file atomically (mode kept, double-checked) and record the new version. Every
        step works in the file's held directory (race-free: see `_fs.confine`)."""
        if data == source.data:
            self.record(
                source.resolved,
                source.data,
                text=source.decoded.text if source.decoded is not None else None,
                expect=source.stat,
            )
            return False
        chosen = _chosen(source, data, text)
        try:
            directory, name = source.resolved.parent()
            with directory:
                # under a read lease on the file replaced: a write by another program during
                # the publish undoes it (stale), never lands in the replaced file (lost)
                replace_in(
                    directory,
                    name,
                    data,
                    stat_mod.S_IMODE(source.stat.st_mode),
                    guard_writers=True,
                    check_held=lambda fd, held: self.double_check_held(source, fd, held),
                )
        except ToolError:
            raise
        except WriterOpen:
            raise open_for_writing(source.display) from None
        except FileChanged:
            raise changed_while_applying(source.display) from None
        except OSError as exc:
            raise io_error(source.display, exc) from None
        self.record(source.resolved, data, text=text, encoding=chosen)
        return True

    def create(
        self, gated: GatedPath | ResolvedPath, data: bytes, *, text: str | None = None
    ) -> list[str]:
        """Create-only publish of a new file (parents made; they go again on failure);
        ``FS_ALREADY_EXISTS`` if another creator got there first. Records the version."""
        rp = gated.resolved if isinstance(gated, GatedPath) else gated
        if not isinstance(gated, GatedPath):  # a gated path was checked by the gate
            self.scope.check_write(rp)
        try:
            made = [os.fspath(m) for m in create_file(rp, data)]
        except FileExistsError:
            raise ToolError(
                "already_exists",
                f"FS_ALREADY_EXISTS: {rp.display} was created meanwhile; read it, then retry",
                "FS_ALREADY_EXISTS",
            ) from None
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        self.record(rp, data, text=text)
        return made

    def record(
        self,
        path: ResolvedPath | str,
        data: bytes | None = None,
        *,
        text: str | None = None,
        expect: os.stat_result | None = None,
        encoding: str | None = None,
    ) -> None:
        """Record the current version of a file this session just wrote (or found unchanged).

        ``data`` is what the file holds (for the digest), ``text`` its decoded form (the
        stale-detail snapshot). A stat that fails, or that is not ``expect``, forgets
        the entry instead of recording a version nobody saw. ``encoding``: the one the
        model settled for the version written over (`chosen_encoding`), which the new
        version, written in it, keeps.
        """
        canonical = path.path if isinstance(path, ResolvedPath) else path
        ledger = self.scope.ledger
        try:
            st = path.stat() if isinstance(path, ResolvedPath) else os.stat(canonical)
        except OSError:
            ledger.forget(canonical)
            return
        if expect is not None and not _same_file(st, expect):
            return
        if data is not None and len(data) != st.st_size:
            ledger.forget(canonical)
            return
        if text is None and data is not None and len(data) <= SNAPSHOT_MAX_BYTES:
            decoded = decode_text(data, self.scope.declared(canonical, encoding))
            text = None if is_binary(data, decoded.encoding) else decoded.text
        snapshot = text if data is not None and len(data) <= SNAPSHOT_MAX_BYTES else None
        # the ledger digests ``data`` itself when the version is young (needs_digest), and
        # only then: an old version's bytes are not hashed for nothing
        ledger.record_present(path, st, content=data, snapshot=snapshot, encoding=encoding)

    # --- simple observed reads and writes (third-party tools) ----------------------------

    def read_bytes(
        self, path: str | os.PathLike[str], *, observe: bool = False
    ) -> tuple[ResolvedPath, bytes]:
        """Read a whole file: confined and race-free (opened beneath its held root, never
        through a final symlink); the read deny list applies. Missing or denied:
        ``FS_NOT_FOUND``.

        A plugin's own read is not the model's: only with ``observe=True`` (a tool whose
        result shows the model the file) does it record that this session observed the
        version read, which later mutations of the file require.
        """
        rp = self.resolve_read(path)
        try:
            fd = rp.open(READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            if observe:
                self.scope.ledger.record_absent(rp.path)
            raise not_found(rp.display) from None
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        try:
            st = os.fstat(fd)
            if stat_mod.S_ISDIR(st.st_mode):
                raise is_directory(rp.display)
            if not stat_mod.S_ISREG(st.st_mode):
                raise not_regular(rp.display, what=kind_of(st))
            with os.fdopen(fd, "rb", closefd=False) as fh:  # buffered, as open() reads
                data = fh.read()
            st1 = os.fstat(fd)
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        finally:
            os.close(fd)
        if observe and _same_file(st, st1) and len(data) == st.st_size:
            self.record(rp, data, expect=st)
        return rp, data

    def read_text(self, path: str | os.PathLike[str], *, observe: bool = False) -> str:
        """Read a text file (encoding detected or declared; see `decode_text`); ``observe``
        as for `read_bytes`."""
        rp, data = self.read_bytes(path, observe=observe)
        return decode_text(data, self.declared_encoding(rp)).text

    def write_bytes(self, path: str | os.PathLike[str], data: bytes) -> ResolvedPath:
        """Atomically create or replace a file and record the new version.

        This does not check observations; declare the path in ``mutates_paths`` to
        have the host gate do that before your tool runs.
        """
        rp = self.scope.workspace.resolve(path, write=True)
        self.scope.check_write(rp)
        try:
            exists = rp.stat() is not None
        except (FileNotFoundError, NotADirectoryError):
            exists = False
        except OSError as exc:
            raise io_error(rp.display, exc) from None
        if exists:
            try:
                replace_file(rp, data)
            except OSError as exc:
                raise io_error(rp.display, exc) from None
            self.record(rp, data)
        else:
            self.create(rp, data)
        return rp

    def write_text(
        self, path: str | os.PathLike[str], text: str, like: SourceFile | DecodedText | None = None
    ) -> ResolvedPath:
        """Atomically write ``text`` in the encoding of ``like`` (a loaded source or its
        decoded text: BOM, byte order, GB18030 and undecodable bytes come back), else UTF-8."""
        decoded = like.decoded if isinstance(like, SourceFile) else like
        data = decoded.encode(text) if decoded is not None else encode_text(text, "utf-8")
        return self.write_bytes(path, data)
