"""The observed-file API plugins use (``ctx.files``): reads that record observations,
writes that are atomic and refresh them. The `files` plugin builds its tools on
the same ledger; third-party tools get the same guarantees through this API."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ._atomic import create_file, replace_file
from ._errors import ToolError
from ._gate import not_found
from ._observations import SNAPSHOT_MAX_BYTES
from ._workspace import ResolvedPath

if TYPE_CHECKING:
    from ._session import Session


class FileAccess:
    """Observed reads and atomic writes inside one session's workspace."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def read_bytes(self, path: str | os.PathLike[str]) -> tuple[ResolvedPath, bytes]:
        """Read a whole file and record that this session observed its version."""
        rp = self._session.workspace.resolve(path)
        try:
            with open(rp.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except FileNotFoundError:
            self._session.ledger.record_absent(rp.path)
            raise not_found(rp.display) from None
        except OSError as exc:
            raise ToolError("tool_error", f"FS_IO: {rp.display}: {exc.strerror}", "FS_IO") \
                from None
        if os.stat(rp.path) == st:
            text = data.decode("utf-8", "surrogateescape") if len(data) <= SNAPSHOT_MAX_BYTES \
                else None
            self._session.ledger.record_present(rp.path, st, content=data, snapshot=text)
        return rp, data

    def read_text(self, path: str | os.PathLike[str]) -> str:
        """Read a UTF-8 text file (undecodable bytes kept as surrogate escapes)."""
        _, data = self.read_bytes(path)
        return data.decode("utf-8", "surrogateescape")

    def write_bytes(self, path: str | os.PathLike[str], data: bytes) -> ResolvedPath:
        """Atomically create or replace a file and record the new version."""
        rp = self._session.workspace.resolve(path, write=True)
        if os.path.exists(rp.path):
            replace_file(rp.path, data)
        else:
            try:
                create_file(rp.path, data)
            except FileExistsError:
                raise ToolError("already_exists", f"FS_ALREADY_EXISTS: {rp.display} was "
                                "created meanwhile; read it, then retry",
                                "FS_ALREADY_EXISTS") from None
        self.record(rp, data)
        return rp

    def write_text(self, path: str | os.PathLike[str], text: str,
                   like: object | None = None) -> ResolvedPath:
        """Atomically write ``text`` as UTF-8 (``like`` is accepted for encoding-aware
        callers; the files plugin's text model keeps a file's encoding and endings)."""
        return self.write_bytes(path, text.encode("utf-8", "surrogateescape"))

    def record(self, path: ResolvedPath | str, data: bytes | None = None) -> None:
        """Record the current version of a file this session just wrote."""
        canonical = path.path if isinstance(path, ResolvedPath) else path
        try:
            st = os.stat(canonical)
        except OSError:
            self._session.ledger.forget(canonical)
            return
        snap = data.decode("utf-8", "surrogateescape") if data is not None and \
            len(data) <= SNAPSHOT_MAX_BYTES else None
        self._session.ledger.record_present(canonical, st, content=data, snapshot=snap)
