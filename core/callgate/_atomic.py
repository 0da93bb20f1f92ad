"""Atomic file publishing (files.md §4): a reader sees the old bytes or the new, never a mix.

Replace: write a private temp file beside the target, fsync, copy the mode,
``os.replace``. Create-only: hard-link a finished temp to the new name, so a
concurrent creator is never overwritten.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat as stat_mod
from collections.abc import Callable

TEMP_INFIX = ".callgate-"


def temp_name(target: str) -> str:
    directory, base = os.path.split(target)
    return os.path.join(directory, f".{base}{TEMP_INFIX}{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(target: str, data: bytes, mode: int) -> str:
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    os.close(fd)
    return tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def replace_file(target: str, data: bytes, *, mode: int | None = None,
                 before_publish: Callable[[], None] | None = None) -> None:
    """Replace ``target`` (a canonical path) atomically with ``data``.

    ``mode`` defaults to the current file's permission bits. ``before_publish``
    runs once the temp is synced (the double check); if it raises, the temp is
    removed and the target is untouched.
    """
    if mode is None:
        mode = stat_mod.S_IMODE(os.stat(target).st_mode)
    tmp = _write_temp(target, data, mode)
    try:
        if before_publish is not None:
            before_publish()
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(os.path.dirname(target))


def create_file(target: str, data: bytes) -> list[str]:
    """Create ``target`` only if nothing is there; returns the parent dirs this call made.

    Raises `FileExistsError` when the name was taken meanwhile (nothing of ours is left).
    """
    made: list[str] = []
    parent = os.path.dirname(target)
    missing = []
    while parent and not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
            made.append(directory)
        except FileExistsError:
            pass
    umask = os.umask(0)
    os.umask(umask)
    try:
        tmp = _write_temp(target, data, 0o666 & ~umask)
        try:
            os.link(tmp, target)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise FileExistsError(target) from None
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            _create_exclusive(target, data, 0o666 & ~umask)
        finally:
            _unlink_quietly(tmp)
    except BaseException:
        for directory in reversed(made):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        raise
    _fsync_dir(os.path.dirname(target))
    return made


def _create_exclusive(target: str, data: bytes, mode: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def sweep_stale_temps(directory: str) -> int:
    """Remove temps left in ``directory`` by writers whose process is gone; returns how many."""
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if not (name.startswith(".") and TEMP_INFIX in name and name.endswith(".tmp")):
            continue
        try:
            pid = int(name.rsplit(TEMP_INFIX, 1)[1].split("-", 1)[0])
        except ValueError:
            continue
        if _pid_alive(pid):
            continue
        _unlink_quietly(os.path.join(directory, name))
        removed += 1
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
