"""Atomic file publishing (files.md §4): a reader sees the old bytes or the new, never a mix,
and a failure leaves nothing behind.

Replace: a private temp beside the target (mode 0600 while written), fsync,
the source's permission bits, the caller's double check, ``os.replace``.
Create-only: hard-link a finished temp to the new name, so a concurrent
creator is never overwritten. Temps are named ``.<base>.callgate-<pid>-<rand>.tmp``
so a later sweep can tell a dead writer's leftovers from a live one's.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat as stat_mod
from collections.abc import Callable, Iterable

TEMP_INFIX = ".callgate-"
#: Directories the background sweep never enters (search.md §1.4).
PRUNE = frozenset({".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".venv", ".tox",
                   ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_NO_HARDLINK = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS,
                errno.EACCES)


def temp_name(target: str) -> str:
    """A fresh temp name in ``target``'s directory, tagged with this process's pid."""
    directory, base = os.path.split(target)
    return os.path.join(directory, f".{base}{TEMP_INFIX}{os.getpid()}-{os.urandom(4).hex()}.tmp")


def fsync_dir(directory: str) -> None:
    """Make a rename or link in ``directory`` durable (best effort)."""
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


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_temp(target: str, data: bytes, mode: int | None) -> str:
    """Write ``data`` to a new temp beside ``target`` and fsync it; returns its path.

    ``mode`` set: created 0600, then given exactly these permission bits.
    ``mode`` None: created ``0o666 & ~umask`` (what a new file gets).
    """
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o600 if mode is not None else 0o666)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        if mode is not None:
            os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        unlink_quietly(tmp)
        raise
    os.close(fd)
    return tmp


def replace_file(target: str, data: bytes, *, mode: int | None = None,
                 before_publish: Callable[[], None] | None = None) -> None:
    """Replace ``target`` (a canonical path) atomically with ``data``.

    ``mode`` defaults to the current file's permission bits. ``before_publish``
    runs once the temp is synced (the double check); if it raises, the temp is
    removed and the target is untouched. Dead writers' temps in the directory
    are swept first.
    """
    if mode is None:
        mode = stat_mod.S_IMODE(os.stat(target).st_mode)
    directory = os.path.dirname(target)
    sweep_stale_temps(directory)
    tmp = write_temp(target, data, mode)
    try:
        if before_publish is not None:
            before_publish()
        os.replace(tmp, target)
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(directory)


def make_parents(target: str) -> list[str]:
    """Create ``target``'s missing parent directories (umask applies); returns those made."""
    missing: list[str] = []
    parent = os.path.dirname(target)
    while parent and not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    made: list[str] = []
    try:
        for directory in reversed(missing):
            try:
                os.mkdir(directory)
                made.append(directory)
            except FileExistsError:
                pass
    except BaseException:
        remove_empty_dirs(made)
        raise
    return made


def remove_empty_dirs(made: Iterable[str]) -> None:
    """Remove directories this call made, deepest first, if they are still empty."""
    for directory in sorted(made, key=len, reverse=True):
        try:
            os.rmdir(directory)
        except OSError:
            pass


def create_file(target: str, data: bytes, *,
                before_publish: Callable[[], None] | None = None) -> list[str]:
    """Create ``target`` only if nothing is there; returns the parent dirs this call made.

    Raises `FileExistsError` when the name was taken meanwhile (the other
    creator's file is untouched and nothing of ours is left).
    """
    made = make_parents(target)
    directory = os.path.dirname(target)
    try:
        sweep_stale_temps(directory)
        tmp = write_temp(target, data, None)
        try:
            if before_publish is not None:
                before_publish()
            link_noreplace(tmp, target)
        finally:
            unlink_quietly(tmp)
    except BaseException:
        remove_empty_dirs(made)
        raise
    fsync_dir(directory)
    return made


def link_noreplace(tmp: str, target: str) -> None:
    """Give the finished temp the name ``target`` unless something already has it.

    Without hard links, ``target`` is created exclusively and the temp's bytes copied in.
    """
    try:
        os.link(tmp, target, follow_symlinks=False)
        return
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", target) from None
        if exc.errno not in _NO_HARDLINK:
            raise
    mode = stat_mod.S_IMODE(os.stat(tmp).st_mode)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with open(tmp, "rb") as src:
            while chunk := src.read(1 << 20):
                _write_all(fd, chunk)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        unlink_quietly(target)
        raise
    os.close(fd)


_RENAME_NOREPLACE = 1
_AT_FDCWD = -100


def _renameat2() -> Callable[..., int] | None:
    import ctypes  # ~10 ms with ctypes.util: only a filesystem without hard links needs it
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def rename_noreplace(source: str, destination: str) -> None:
    """Rename without ever replacing ``destination``.

    A hard link then unlink where the filesystem has links, else ``renameat2``
    with ``RENAME_NOREPLACE``. Raises `FileExistsError` if the name is taken
    (the source is intact), ``OSError(EXDEV)`` across filesystems.
    """
    try:
        os.link(source, destination, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", destination) from None
        if exc.errno not in _NO_HARDLINK:
            raise
    else:
        os.unlink(source)
        return
    fn = _renameat2()
    if fn is None:
        raise OSError(errno.ENOTSUP, "this filesystem cannot rename without replacing",
                      destination)
    if fn(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination),
          _RENAME_NOREPLACE) != 0:
        import ctypes

        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileExistsError(err, "File exists", destination)
        raise OSError(err, os.strerror(err), destination)


def copy_noreplace(source: str, destination: str,
                   before_publish: Callable[[], None] | None = None) -> None:
    """Cross-filesystem move's first half: copy ``source`` to a new ``destination``.

    A temp copy in the destination directory, fsync'ed, with the source's mode
    and mtime; ``before_publish`` re-checks the source; then a create-only
    link. Any failure removes the temp. The caller removes the source.
    """
    tmp = temp_name(destination)
    try:
        with open(source, "rb") as src, open(tmp, "xb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.flush()
            os.fsync(dst.fileno())
        st = os.stat(source)
        os.chmod(tmp, stat_mod.S_IMODE(st.st_mode))
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        if before_publish is not None:
            before_publish()
        link_noreplace(tmp, destination)
    finally:
        unlink_quietly(tmp)


def _temp_pid(name: str) -> int | None:
    if not (name.startswith(".") and TEMP_INFIX in name and name.endswith(".tmp")):
        return None
    try:
        return int(name.rsplit(TEMP_INFIX, 1)[1].split("-", 1)[0])
    except ValueError:
        return None


def sweep_stale_temps(directory: str) -> int:
    """Remove temps left in ``directory`` by writers whose process is gone; returns how many.

    A temp whose pid is alive (or reused by another process) is kept.
    """
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        pid = _temp_pid(name)
        if pid is None or pid_alive(pid):
            continue
        unlink_quietly(os.path.join(directory, name))
        removed += 1
    return removed


def sweep_tree(roots: Iterable[str], stop: Callable[[], bool] | None = None) -> int:
    """Sweep every directory under ``roots`` (not entering `PRUNE` dirs or symlinks)."""
    removed = 0
    for root in roots:
        for directory, dirs, files in os.walk(root):
            if stop is not None and stop():
                return removed
            dirs[:] = [d for d in dirs if d not in PRUNE]
            if any(_temp_pid(f) is not None for f in files):
                removed += sweep_stale_temps(directory)
    return removed


def pid_alive(pid: int) -> bool:
    """False only when ``os.kill(pid, 0)`` says no such process (ESRCH)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
