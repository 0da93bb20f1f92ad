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
import stat as stat_mod
from collections.abc import Callable, Iterable

from .confine import READ_FLAGS, HeldDir, libc_function, open_dir, walk_dirs
from .file_lease import ReadLease
from .workspace import ResolvedPath

TEMP_INFIX = ".callgate-"
#: Directories the background sweep never enters (search.md §1.4).
PRUNE = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        "__pycache__",
        ".venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
_NO_HARDLINK = (
    errno.EPERM,
    errno.ENOTSUP,
    errno.EOPNOTSUPP,
    errno.EMLINK,
    errno.ENOSYS,
    errno.EACCES,
)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL

#: A file to publish: a confined `ResolvedPath` (every step beneath its held root), or a
#: plain path string (its directory is opened as named, then every step happens in it).
Target = str | ResolvedPath


def temp_basename(name: str) -> str:
    """A fresh temp name for a file called ``name``, tagged with this process's pid."""
    return f".{name}{TEMP_INFIX}{os.getpid()}-{os.urandom(4).hex()}.tmp"


def temp_name(target: str) -> str:
    """A fresh temp name in ``target``'s directory, tagged with this process's pid."""
    directory, base = os.path.split(os.fspath(target))
    return os.path.join(directory, temp_basename(base))


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def held_parent(target: Target) -> tuple[HeldDir, str]:
    """``target``'s directory, held, and its final name (close the directory)."""
    if isinstance(target, ResolvedPath):
        return target.parent()
    head, name = os.path.split(os.fspath(target))
    return open_dir(head or "."), name


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_temp(directory: HeldDir, name: str, data: bytes, mode: int | None) -> str:
    """Write ``data`` to a new temp for ``name`` in ``directory`` and fsync it; returns the
    temp's name there.

    ``mode`` set: created 0600, then given exactly these permission bits.
    ``mode`` None: created ``0o666 & ~umask`` (what a new file gets).
    """
    tmp = temp_basename(name)
    fd = directory.open(tmp, _CREATE, 0o600 if mode is not None else 0o666)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        if mode is not None:
            os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        directory.unlink_quietly(tmp)
        raise
    os.close(fd)
    return tmp


def replace_in(
    directory: HeldDir,
    name: str,
    data: bytes,
    mode: int,
    before_publish: Callable[[], None] | None = None,
    *,
    guard_writers: bool = False,
    check_held: Callable[[int, os.stat_result], None] | None = None,
) -> None:
    """`replace_file` once the directory is held: sweep, temp, check, ``renameat``, fsync.

    ``guard_writers``: the replace happens under a kernel read lease on the file it
    replaces (`replace_guarded`), so a write by another program is never lost to it;
    ``check_held`` is then the double check, handed the leased descriptor and its stat
    (it reads the file on that descriptor: no second open, no second stat).
    """
    sweep_held(directory)
    tmp = write_temp(directory, name, data, mode)
    try:
        if guard_writers:
            replace_guarded(directory, tmp, name, before_publish, check_held)
        else:
            if before_publish is not None:
                before_publish()
            directory.replace(tmp, directory, name)
    except BaseException:
        directory.unlink_quietly(tmp)
        raise
    directory.fsync()


def replace_guarded(
    directory: HeldDir,
    tmp: str,
    name: str,
    before_publish: Callable[[], None] | None = None,
    check_held: Callable[[int, os.stat_result], None] | None = None,
) -> None:
    """Rename ``tmp`` over ``name`` so that no write to the replaced file can be lost.

    The file being replaced is opened (never through a symlink) and leased (`ReadLease`):
    the lease is refused while anyone has it open for writing (`WriterOpen`), and while it
    is held an ``open`` for writing waits. ``before_publish`` (the caller's double check
    of the bytes) runs under the lease, so what it compares is the last thing written.
    Then the two names are exchanged (``RENAME_EXCHANGE``): the replaced file stays
    linked as ``tmp`` until it is proven untouched. If a writer asked to open it meanwhile
    (the lease broke), or it is not the file that was checked, or (without a lease) its
    bytes or times moved, the exchange is undone, the writer's wait ends on the file back
    in its place, and `FileChanged` is raised: nothing was replaced.
    """
    old = directory.open(name, READ_FLAGS)
    try:
        lease = ReadLease.take(old)
        try:
            held = os.fstat(old)
            if not stat_mod.S_ISREG(held.st_mode):
                raise FileChanged()
            if before_publish is not None:
                before_publish()
            if check_held is not None:
                check_held(old, held)
            if _identity(directory.stat(name)) != _identity(held):
                raise FileChanged()
            if not exchange_in(directory, tmp, name):
                # no exchange here: the last look at the lease is just before the rename
                if lease is not None and lease.broken():
                    raise FileChanged()
                directory.replace(tmp, directory, name)
                return
            displaced = directory.stat(tmp)
            if _identity(displaced) != _identity(held) or (
                lease.broken() if lease is not None else _moved(old, held)
            ):
                exchange_in(directory, tmp, name)  # put it back: nothing was replaced
                raise FileChanged()
            directory.unlink_quietly(tmp)
        finally:
            if lease is not None:
                lease.release()
    finally:
        os.close(old)


class FileChanged(OSError):
    """The file being replaced was written (or swapped) during the replace; it is back in
    its place and nothing was replaced."""

    def __init__(self) -> None:
        super().__init__(errno.ESTALE, "the file changed while it was being replaced")


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _moved(fd: int, st: os.stat_result) -> bool:
    """Without a lease: whether the file behind ``fd`` was written since ``st`` (its size or
    modification time moved)."""
    now = os.fstat(fd)
    return (now.st_size, now.st_mtime_ns) != (st.st_size, st.st_mtime_ns)


_RENAME_EXCHANGE = 2
_exchange_works: bool | None = None


def exchange_in(directory: HeldDir, a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` of a held directory atomically (``renameat2`` with
    ``RENAME_EXCHANGE``); ``False`` where this kernel or filesystem cannot."""
    global _exchange_works
    if _exchange_works is False or directory.fd is None:
        return False
    fn = _renameat2()
    if fn is None:
        _exchange_works = False
        return False
    if fn(directory.fd, os.fsencode(a), directory.fd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        _exchange_works = True
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        if err == errno.ENOSYS:
            _exchange_works = False
        return False
    raise OSError(err, os.strerror(err), directory.join(b))


def replace_file(
    target: Target,
    data: bytes,
    *,
    mode: int | None = None,
    before_publish: Callable[[], None] | None = None,
    guard_writers: bool = False,
) -> None:
    """Replace ``target`` atomically with ``data``.

    ``target`` is a canonical path: a confined `ResolvedPath` (race-free beneath its
    root) or a path string. ``mode`` defaults to the current file's permission bits.
    ``before_publish`` runs once the temp is synced (the double check); if it raises,
    the temp is removed and the target is untouched. Dead writers' temps in the
    directory are swept first. ``guard_writers``: refuse (`WriterOpen`) while another
    program has the file open for writing, and undo the replace (`FileChanged`) when one
    starts to write during it (`replace_guarded`): no write to the old file is lost.
    """
    directory, name = held_parent(target)
    with directory:
        if mode is None:
            st = directory.stat(name, follow=not isinstance(target, ResolvedPath))
            mode = stat_mod.S_IMODE(st.st_mode)
        replace_in(directory, name, data, mode, before_publish, guard_writers=guard_writers)


def make_parents(target: Target) -> list[str | ResolvedPath]:
    """Create ``target``'s missing parent directories (umask applies); returns those made,
    for `remove_empty_dirs` (path strings; for a confined target, `ResolvedPath` objects made
    one component at a time beneath its root)."""
    if isinstance(target, ResolvedPath) and target.anchor is not None:
        anchor = target.anchor
        held, made = anchor.make_dirs(os.path.dirname(target.rel))
        held.close()
        return [
            ResolvedPath(p, p, p, rel, anchor)
            for rel in made
            for p in (os.path.join(anchor.path, rel),)
        ]
    missing: list[str] = []
    parent = os.path.dirname(os.fspath(target))
    while parent and not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    made_paths: list[str | ResolvedPath] = []
    try:
        for directory in reversed(missing):
            try:
                os.mkdir(directory)
                made_paths.append(directory)
            except FileExistsError:
                pass
    except BaseException:
        remove_empty_dirs(made_paths)
        raise
    return made_paths


def remove_empty_dirs(made: Iterable[str | ResolvedPath]) -> None:
    """Remove directories this call made, deepest first, if they are still empty."""
    for directory in sorted(made, key=lambda d: len(os.fspath(d)), reverse=True):
        try:
            if isinstance(directory, ResolvedPath) and directory.anchor is not None:
                directory.anchor.remove_dirs([directory.rel])
            else:
                os.rmdir(directory)
        except OSError:
            pass


def create_file(
    target: Target, data: bytes, *, before_publish: Callable[[], None] | None = None
) -> list[str | ResolvedPath]:
    """Create ``target`` only if nothing is there; returns the parent dirs this call made.

    Raises `FileExistsError` when the name was taken meanwhile (the other
    creator's file is untouched and nothing of ours is left). A confined target's
    parents are made one component at a time beneath its root, and the file is
    linked into the very directory that walk ends in.
    """
    if isinstance(target, ResolvedPath) and target.anchor is not None:
        anchor = target.anchor
        head, name = os.path.split(target.rel)
        directory, rels = anchor.make_dirs(head)
        made: list[str | ResolvedPath] = [
            ResolvedPath(p, p, p, rel, anchor)
            for rel in rels
            for p in (os.path.join(anchor.path, rel),)
        ]
    else:
        made = make_parents(target)
        directory, name = None, ""  # held below, inside the cleanup
    try:
        if directory is None:
            directory, name = held_parent(target)
        with directory:
            sweep_held(directory)
            tmp = write_temp(directory, name, data, None)
            try:
                if before_publish is not None:
                    before_publish()
                link_noreplace(directory, tmp, name)
            finally:
                directory.unlink_quietly(tmp)
            directory.fsync()
    except BaseException:
        if directory is not None:
            directory.close()
        remove_empty_dirs(made)
        raise
    return made


def link_noreplace(directory: HeldDir, tmp: str, name: str) -> None:
    """Give the finished temp ``tmp`` the name ``name`` unless something already has it.

    Without hard links, ``name`` is created exclusively and the temp's bytes copied in.
    """
    try:
        directory.link(tmp, directory, name)
        return
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", directory.join(name)) from None
        if exc.errno not in _NO_HARDLINK:
            raise
    src = directory.open(tmp, READ_FLAGS)
    try:
        mode = stat_mod.S_IMODE(os.fstat(src).st_mode)
        fd = directory.open(name, _CREATE, mode)
        try:
            while chunk := os.read(src, 1 << 20):
                _write_all(fd, chunk)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            directory.unlink_quietly(name)
            raise
        os.close(fd)
    finally:
        os.close(src)


_RENAME_NOREPLACE = 1
_AT_FDCWD = -100
_renameat2_fn: list[Callable[..., int] | None] = []


def _renameat2() -> Callable[..., int] | None:
    if not _renameat2_fn:
        import ctypes  # loaded at the first exchange, or where hard links are missing

        _renameat2_fn.append(
            libc_function(
                "renameat2",
                [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint],
                ctypes.c_int,
            )
        )
    return _renameat2_fn[0]


def rename_noreplace(source: Target, destination: Target) -> None:
    """Rename without ever replacing ``destination``.

    A hard link then unlink where the filesystem has links, else ``renameat2``
    with ``RENAME_NOREPLACE``. Both names are taken in their held directories.
    Raises `FileExistsError` if the name is taken (the source is intact),
    ``OSError(EXDEV)`` across filesystems.
    """
    sdir, sname = held_parent(source)
    with sdir:
        ddir, dname = held_parent(destination)
        with ddir:
            rename_noreplace_in(sdir, sname, ddir, dname)


def rename_noreplace_in(sdir: HeldDir, sname: str, ddir: HeldDir, dname: str) -> None:
    """`rename_noreplace` once both directories are held."""
    try:
        sdir.link(sname, ddir, dname)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise FileExistsError(errno.EEXIST, "File exists", ddir.join(dname)) from None
        if exc.errno not in _NO_HARDLINK:
            raise
    else:
        sdir.unlink(sname)
        return
    fn = _renameat2()
    if fn is None:
        raise OSError(
            errno.ENOTSUP, "this filesystem cannot rename without replacing", ddir.join(dname)
        )
    sfd = sdir.fd if sdir.fd is not None else _AT_FDCWD
    dfd = ddir.fd if ddir.fd is not None else _AT_FDCWD
    spath = sname if sdir.fd is not None else sdir.join(sname)
    dpath = dname if ddir.fd is not None else ddir.join(dname)
    if fn(sfd, os.fsencode(spath), dfd, os.fsencode(dpath), _RENAME_NOREPLACE) != 0:
        import ctypes

        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileExistsError(err, "File exists", ddir.join(dname))
        raise OSError(err, os.strerror(err), ddir.join(dname))


def open_source(source: Target) -> int:
    """Open ``source`` to read (beneath its root when confined; never a final symlink)."""
    if isinstance(source, ResolvedPath):
        return source.open(READ_FLAGS)
    return os.open(os.fspath(source), READ_FLAGS)


def copy_noreplace(
    source: Target, destination: Target, before_publish: Callable[[], None] | None = None
) -> None:
    """Cross-filesystem move's first half: copy ``source`` to a new ``destination``.

    A temp copy in the destination directory, fsync'ed, with the source's mode
    and mtime; ``before_publish`` re-checks the source; then a create-only
    link. Any failure removes the temp. The caller removes the source.
    """
    src = open_source(source)
    try:
        st = os.fstat(src)
        if not stat_mod.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(source))
        directory, name = held_parent(destination)
        with directory:
            tmp = temp_basename(name)
            fd = directory.open(tmp, _CREATE, 0o600)
            try:
                try:
                    while chunk := os.read(src, 1 << 20):
                        _write_all(fd, chunk)
                    os.fsync(fd)
                    os.fchmod(fd, stat_mod.S_IMODE(st.st_mode))
                    os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
                finally:
                    os.close(fd)
                if before_publish is not None:
                    before_publish()
                link_noreplace(directory, tmp, name)
            finally:
                directory.unlink_quietly(tmp)
    finally:
        os.close(src)


def _temp_pid(name: str) -> int | None:
    if not (name.startswith(".") and TEMP_INFIX in name and name.endswith(".tmp")):
        return None
    try:
        return int(name.rsplit(TEMP_INFIX, 1)[1].split("-", 1)[0])
    except ValueError:
        return None


def sweep_stale_temps(directory: str | HeldDir) -> int:
    """Remove temps left in ``directory`` by writers whose process is gone; returns how many.

    A temp whose pid is alive (or reused by another process) is kept.
    """
    if isinstance(directory, HeldDir):
        return sweep_held(directory)
    try:
        held = open_dir(directory)
    except OSError:
        return 0
    with held:
        return sweep_held(held)


def sweep_held(directory: HeldDir, names: Iterable[str] | None = None) -> int:
    """`sweep_stale_temps` in a held directory (``names``: its listing, if known)."""
    removed = 0
    if names is None:
        try:
            names = directory.names()
        except OSError:
            return 0
    for name in names:
        pid = _temp_pid(name)
        if pid is None or pid_alive(pid):
            continue
        directory.unlink_quietly(name)
        removed += 1
    return removed


def sweep_tree(roots: Iterable[str | HeldDir], stop: Callable[[], bool] | None = None) -> int:
    """Sweep every directory under ``roots`` (not entering `PRUNE` dirs or symlinks).

    The walk holds each directory and opens the next relative to it without following
    a symlink, so a directory swapped for a link mid-walk is skipped, never left for.
    """
    removed = 0
    for root in roots:
        try:
            top = root if isinstance(root, HeldDir) else open_dir(root)
        except OSError:
            continue
        try:
            for directory, files in walk_dirs(top, PRUNE.__contains__, stop):
                if any(_temp_pid(f) is not None for f in files):
                    removed += sweep_held(directory, files)
            if stop is not None and stop():
                return removed
        finally:
            if top is not root:
                top.close()
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
