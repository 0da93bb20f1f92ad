"""Several file changes published as one: each file atomically, and all or none of them.

Each change goes through the core's file API (``ctx.files``: create-only publish, the
double-checked atomic replace, the ledger records). A removal is a rename of the file to a
hidden temp beside it (``.<name>.callgate-<pid>-<rand>.tmp``, which the stale-temp sweep
drops should the process die), dropped only once every change has been made. When a
change fails, the ones already made are undone in reverse order: a created file goes (and
the directories made for it), a replaced file gets its old bytes and mode back, a removed
one its name; what the session has observed is recorded again, so the model's reads stay
valid. An undo never overwrites what another program wrote meanwhile: it says so instead.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Callable

from callgate import ToolContext, ToolError
from callgate.files import (
    FileChanged,
    GatedPath,
    SourceFile,
    changed_while_applying,
    io_error,
    remove_empty_dirs,
    replace_file,
    temp_basename,
)
from callgate.paths import ResolvedPath

from ._common import fail


def _holds(rp: ResolvedPath, data: bytes) -> bool:
    """Whether the file at ``rp`` (never through a final symlink) holds exactly ``data``."""
    try:
        fd = rp.open()
    except OSError:
        return False
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(len(data) + 1) == data
    finally:
        os.close(fd)


class ChangeSet:
    """The changes made so far, and how to undo or finish each."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._finish: list[Callable[[], None]] = []

    def create(self, gated: GatedPath, data: bytes, text: str | None) -> None:
        """A new file (``FS_ALREADY_EXISTS`` if someone created it meanwhile)."""
        ctx, rp = self._ctx, gated.resolved
        made = ctx.files.create(gated, data, text=text)
        try:
            identity = _identity(rp.stat())
        except OSError:
            identity = None

        def undo() -> None:
            directory, name = rp.parent()
            with directory:
                try:
                    now = directory.stat(name)
                except FileNotFoundError:
                    now = None
                if now is not None:
                    if _identity(now) != identity or not _holds(rp, data):
                        raise _kept(rp.display, "it changed after it was created")
                    directory.unlink(name)
                    directory.fsync()
            remove_empty_dirs(made)
            ctx.session.ledger.forget(rp.path)

        self._undo.append((rp.display, undo))

    def replace(self, source: SourceFile, data: bytes, text: str | None) -> None:
        """New bytes for an observed file (double-checked; a no-op when they are the same)."""
        ctx = self._ctx
        if not ctx.files.publish(source, data, text=text):
            return
        rp = source.resolved

        def undo() -> None:
            def still_ours() -> None:
                if not _holds(rp, data):
                    raise FileChanged()

            try:
                replace_file(rp, source.data, mode=stat_mod.S_IMODE(source.stat.st_mode),
                             before_publish=still_ours)
            except FileChanged:
                raise _kept(rp.display, "another program changed it after the patch wrote "
                            "it") from None
            old = source.decoded.text if source.decoded is not None else None
            ctx.files.record(rp, source.data, text=old)

        self._undo.append((rp.display, undo))

    def remove(self, source: SourceFile) -> None:
        """Take an observed file away (double-checked); it is only gone for good once
        `finish` runs."""
        ctx, rp = self._ctx, source.resolved
        directory, name = rp.parent()
        stash = temp_basename(name)
        with directory:
            ctx.files.double_check(source, directory)
            try:
                directory.replace(name, directory, stash)
            except FileNotFoundError:
                raise changed_while_applying(rp.display) from None
            except OSError as exc:
                raise io_error(rp.display, exc) from None
            directory.fsync()
        ctx.session.ledger.record_absent(rp.path)

        def undo() -> None:
            held, _ = rp.parent()
            with held:
                if held.exists(name):
                    raise _kept(rp.display, f"something was created at its name meanwhile; "
                                f"its old content is in {stash} beside it")
                held.replace(stash, held, name)
                held.fsync()
            ctx.files.record(rp, source.data, text=source.decoded.text
                             if source.decoded is not None else None)

        def finish() -> None:
            held, _ = rp.parent()
            with held:
                held.unlink_quietly(stash)
                held.fsync()

        self._undo.append((rp.display, undo))
        self._finish.append(finish)

    @property
    def made(self) -> int:
        """How many changes are made so far."""
        return len(self._undo)

    def finish(self) -> None:
        """Every change is made: drop the stashed removals."""
        for finish in self._finish:
            try:
                finish()
            except OSError:
                pass  # a stash left behind is swept with the other stale temps
        self._undo.clear()
        self._finish.clear()

    def rollback(self) -> list[str]:
        """Undo what was made, newest first; returns what could not be undone."""
        problems: list[str] = []
        while self._undo:
            display, undo = self._undo.pop()
            try:
                undo()
            except ToolError as exc:
                problems.append(exc.message)
            except OSError as exc:
                problems.append(f"{display}: {exc.strerror or exc}")
        self._finish.clear()
        return problems


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _kept(display: str, why: str) -> ToolError:
    return fail("PATCH_ROLLBACK", f"{display} could not be put back: {why}")
