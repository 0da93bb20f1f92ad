"""move_file: rename a regular file without ever replacing another (files.md §6.6)."""

from __future__ import annotations

import errno
import os
from typing import Any

from callgate import (
    FilePreview,
    GatedPath,
    PathRole,
    PermissionSubject,
    ToolContext,
    ToolError,
    ToolSpec,
    changed_while_applying,
    copy_noreplace,
    io_error,
    make_parents,
    remove_empty_dirs,
    rename_noreplace,
    temp_name,
    version_of,
)

from ._common import fail, path_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source_path", "destination_path"],
    "properties": {
        "source_path": path_schema("The file to move."),
        "destination_path": path_schema("Its new path; missing parent directories are "
                                        "created. An existing file there is never replaced."),
    },
}

DESCRIPTION = (
    "Move or rename a file from source_path to destination_path, creating the destination's "
    "parent directories as needed; an existing destination is never overwritten. Use this "
    "instead of mv, Move-Item or ren in the shell, so workspace confinement and edit "
    "permissions apply. Needs a current observation of the source (any read_file window)."
)


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
        now = os.lstat(src.path)
    except OSError:
        raise changed_while_applying(src.display) from None
    assert src.stat is not None
    if version_of(now) != version_of(src.stat):
        raise changed_while_applying(src.display)


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    src, dst, same = _check(ctx)
    if src.path == dst.path:
        return f"{src.display} is already at {dst.display}; nothing changed"
    made = make_parents(dst.path)
    try:
        _ensure_source(src)
        if same:
            _rename_same_file(src.path, dst.path)
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
        st = os.stat(dst.path)
    except OSError:
        ctx.session.ledger.record_absent(src.path)
        ctx.session.ledger.forget(dst.path)
    else:
        ctx.session.ledger.move(src.path, dst.path, st)
    return f"moved {src.display} to {dst.display}"


def _move(src: GatedPath, dst: GatedPath) -> None:
    try:
        rename_noreplace(src.path, dst.path)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        copy_noreplace(src.path, dst.path, before_publish=lambda: _ensure_source(src))
        os.unlink(src.path)


def _rename_same_file(source: str, destination: str) -> None:
    """Source and destination are one file: rename through a temp name, so a case-only
    rename works where names are case-insensitive, and a second hard link just goes."""
    tmp = temp_name(source)
    os.rename(source, tmp)
    try:
        os.link(tmp, destination, follow_symlinks=False)
    except FileExistsError:
        if not os.path.samefile(tmp, destination):
            os.rename(tmp, source)
            raise
    except OSError:
        os.rename(tmp, source)
        raise
    os.unlink(tmp)


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    src, dst, _same = _check(ctx)
    kind = "noop" if src.path == dst.path else "rename"
    assert src.stat is not None
    return FilePreview(kind=kind, path=src.display, destination=dst.display,  # type: ignore[arg-type]
                       base_version=version_of(src.stat))


SPEC = ToolSpec(
    name="move_file", description=DESCRIPTION, schema=SCHEMA, execute=execute, preview=preview,
    mutates_paths=(PathRole("source_path", "modify", follow_symlinks=False),
                   PathRole("destination_path", "create", follow_symlinks=False)),
    permission_subject=PermissionSubject("path", ("source_path", "destination_path")),
    groups=("Edit",), visibility="hidden",
)
