"""move_file: rename a regular file without ever replacing another (files.md §6.6)."""

from __future__ import annotations

import errno
from typing import Any

from callgate import ToolContext, ToolError
from callgate.files import (
    GatedPath,
    changed_while_applying,
    copy_noreplace,
    io_error,
    make_parents,
    remove_empty_dirs,
    rename_noreplace,
    temp_basename,
    version_of,
)
from callgate.paths import ResolvedPath
from callgate_toolkit.diffs import FilePreview

from .._common import fail


def _already_exists(display: str) -> ToolError:
    return fail("FS_ALREADY_EXISTS", f"{display} already exists; move_file never overwrites; "
                "pick another destination", "already_exists")


def _check(ctx: ToolContext) -> tuple[GatedPath, GatedPath, bool]:
    """Steps 3 and 5 beyond the host gate; returns (source, destination, same file)."""
    src, dst = ctx.gated["source_path"], ctx.gated["destination_path"]
    same = False
    if dst.stat is not None and src.path != dst.path:
        st, dt = src.stat, dst.stat
        assert st is not None
        if (dt.st_dev, dt.st_ino) != (st.st_dev, st.st_ino):
            raise _already_exists(dst.display)
        same = True  # the same file by another name: a case-only rename or a hard link
    return src, dst, same


def _ensure_source(src: GatedPath) -> None:
    """§5.5 for a move: the source is still the version the gate saw."""
    try:
        now = src.resolved.stat()
    except OSError:
        raise changed_while_applying(src.display) from None
    assert src.stat is not None
    if version_of(now) != version_of(src.stat):
        raise changed_while_applying(src.display)


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    src, dst, same = _check(ctx)
    if src.path == dst.path:
        return f"{src.display} is already at {dst.display}; nothing changed"
    made = make_parents(dst.resolved)
    try:
        _ensure_source(src)
        if same:
            _rename_same_file(src.resolved, dst.resolved)
        else:
            _move(src, dst)
    except FileExistsError:
        remove_empty_dirs(made)
        raise _already_exists(dst.display) from None
    except ToolError:
        remove_empty_dirs(made)
        raise
    except OSError as exc:
        remove_empty_dirs(made)
        raise io_error(dst.display, exc) from None
    try:
        st = dst.resolved.stat()
    except OSError:
        ctx.session.ledger.record_absent(src.path)
        ctx.session.ledger.forget(dst.path)
    else:
        ctx.session.ledger.move(src.path, dst.resolved, st)
    return f"moved {src.display} to {dst.display}"


def _move(src: GatedPath, dst: GatedPath) -> None:
    """Every name is taken in its held directory (race-free beneath the roots)."""
    try:
        rename_noreplace(src.resolved, dst.resolved)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        copy_noreplace(src.resolved, dst.resolved, before_publish=lambda: _ensure_source(src))
        parent, name = src.resolved.parent()
        with parent:
            parent.unlink(name)


def _rename_same_file(source: ResolvedPath, destination: ResolvedPath) -> None:
    """Source and destination are one file: rename through a temp name, so a case-only
    rename works where names are case-insensitive, and a second hard link just goes."""
    sdir, sname = source.parent()
    with sdir:
        ddir, dname = destination.parent()
        with ddir:
            tmp = temp_basename(sname)
            sdir.replace(sname, sdir, tmp)
            try:
                sdir.link(tmp, ddir, dname)
            except FileExistsError:
                a, b = sdir.stat(tmp), ddir.stat(dname)
                if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
                    sdir.replace(tmp, sdir, sname)
                    raise
            except OSError:
                sdir.replace(tmp, sdir, sname)
                raise
            sdir.unlink(tmp)


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    src, dst, _same = _check(ctx)
    kind = "noop" if src.path == dst.path else "rename"
    assert src.stat is not None
    return FilePreview(kind=kind, path=src.display, destination=dst.display,  # type: ignore[arg-type]
                       base_version=version_of(src.stat))
