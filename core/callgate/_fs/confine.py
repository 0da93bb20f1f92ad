"""Race-free file access: every system call on a confined path works below a held directory.

`Workspace.resolve` checks a path once (its canonical form against the roots).
Reusing that path as a string would trust the check forever: a job that swaps a
directory on the path for a symbolic link between the check and the use (a
``rename`` loop, ``renameat2(RENAME_EXCHANGE)``) would send the call outside.
So nothing here takes a path string to a system call. Each root is held open
(an `Anchor`, opened once); a confined path is the anchor plus a relative path
without symlinks or ``..``; and every use resolves that relative path again, in
the kernel, beneath the held root:

- ``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` where Linux has it (5.6+):
  a relative symlink that appears on the way is followed only while it stays
  below the root; one leading out, and any absolute one, fails the call (``EXDEV``);
- elsewhere (older kernels, seccomp filters that refuse it, the BSDs and macOS) a
  walk one component at a time, each opened relative to the last with
  ``O_NOFOLLOW | O_DIRECTORY``: any symlink on the way fails the call (``ELOOP``).

The final component is never followed (``O_NOFOLLOW``, ``AT_SYMLINK_NOFOLLOW``),
and changes to directory entries use the ``*at`` calls on a held parent
(`HeldDir`): ``openat(O_CREAT | O_EXCL)``, ``renameat``, ``linkat``,
``unlinkat``, ``mkdirat``, ``fstatat``. A swap between check and use can make a
call fail (or act on another file inside the same root); it cannot reach outside.

A directory held open stays the directory it was when it was opened, wherever
it is renamed to later; only names inside it are touched. Moving it out of the
root needs write access to the place it moves to, so that gains a job nothing it
could not already do there.

Windows has no directory descriptors in Python: there `HeldDir` keeps the path
and joins names to it, which is the string-based behaviour (checked, then used
by name; a swap between the two is not prevented). ``HELD`` says which applies.
"""

from __future__ import annotations

import errno
import os
import platform
import stat as stat_mod
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

#: Listings of held directories take turns. Listing a descriptor reads through a duplicate
#: that shares its directory offset (rewound when the listing ends), and one held
#: directory is listed by many threads at once (every call of a session borrows its root's
#: anchor; the stale-temp sweep too): two listings at the same time each saw only what the
#: other had not read, and one came back empty (a session's first glob found nothing).
#: A private descriptor per listing would not do: a `DirEntry` stats through the
#: descriptor it was listed from, which must stay the held one.
_LISTING = threading.Lock()
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_NOCTTY = getattr(os, "O_NOCTTY", 0)
#: How a directory is held: readable (to list and fsync it), never through a final symlink.
DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
#: How a directory is held only to look names up in it (stat, open beneath it): Linux's
#: ``O_PATH`` reads nothing, so holding it is no inotify ``IN_OPEN`` for a watcher of the
#: tree (the files plugin's woke for every read below the root); elsewhere `DIR_FLAGS`.
LOOKUP_FLAGS = (
    (os.O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) if hasattr(os, "O_PATH") else DIR_FLAGS
)
#: How a file is opened to be read: never through a final symlink; a FIFO does not block.
READ_FLAGS = os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC

#: True where directories are held as descriptors and names resolved beneath them (POSIX).
HELD = (
    bool(O_DIRECTORY and O_NOFOLLOW)
    and all(
        f in os.supports_dir_fd
        for f in (os.open, os.stat, os.unlink, os.rename, os.link, os.mkdir, os.rmdir)
    )
    and os.scandir in os.supports_fd
)

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
#: openat2's number: one table for every architecture since Linux 5.1, but for these.
_SYS_OPENAT2 = {"alpha": 547, "ia64": 548, "mips": 4437, "mips64": 5437}
_RETRIES = 8  # openat2 answers EAGAIN when a rename raced a ".." in a symlink it followed


class PathChanged(OSError):
    """A confined path changed while a call used it: a component became a symbolic link,
    or one on the way now leads outside its root. Nothing was done there."""

    def __init__(self, rel: str, cause: int) -> None:
        super().__init__(
            cause,
            "the path changed while this call used it (a directory on it "
            "was replaced by a symbolic link)",
            rel,
        )


# --- openat2 ---------------------------------------------------------------

_openat2: Callable[[int, str, int, int], int] | None = None
_openat2_known = platform.system() != "Linux"  # elsewhere: never tried


def libc_function(name: str, argtypes: list[Any], restype: Any) -> Any:
    """A C library function by ``name`` with its signature set (errno kept), or ``None``
    where there is no such function. Loads ctypes (~4 ms) on first use."""
    import ctypes

    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = restype
    return fn


def _load_openat2() -> Callable[[int, str, int, int], int] | None:
    """The ``openat2`` system call through ctypes, or ``None`` if this kernel lacks it."""
    import ctypes  # ~4 ms: loaded at the first confined open, not at import

    # syscall(2) is variadic; integer and pointer arguments pass in the same registers
    # as for a fixed signature on every Linux ABI, and typed arguments convert fastest
    syscall = libc_function(
        "syscall",
        [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t],
        ctypes.c_long,
    )
    if syscall is None:
        return None
    number = _SYS_OPENAT2.get(platform.machine(), 437)

    class OpenHow(ctypes.Structure):
        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    size = ctypes.sizeof(OpenHow)
    resolve = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS
    hows: dict[tuple[int, int], tuple[Any, int]] = {}  # read-only once made: shared freely
    get_errno = ctypes.get_errno
    addressof = ctypes.addressof

    def call(dirfd: int, rel: str, flags: int, mode: int) -> int:
        key = (flags, mode if flags & os.O_CREAT else 0)
        how = hows.get(key)
        if how is None:
            made = OpenHow(key[0], key[1], resolve)
            how = hows[key] = (made, addressof(made))
        path = os.fsencode(rel)
        for _ in range(_RETRIES):
            fd = syscall(number, dirfd, path, how[1], size)
            if fd >= 0:
                return int(fd)
            err = get_errno()
            if err == errno.EINTR or err == errno.EAGAIN:
                continue
            raise OSError(err, os.strerror(err), rel)
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), rel)

    # probe: a kernel without it (ENOSYS) or a filter refusing it (EPERM) means the walk
    try:
        fd = call(-100, ".", DIR_FLAGS, 0)  # AT_FDCWD
    except OSError as exc:
        if exc.errno in (errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG):
            return None
        return call
    os.close(fd)
    return call


def _openat2_fn() -> Callable[[int, str, int, int], int] | None:
    global _openat2, _openat2_known
    if not _openat2_known:
        _openat2 = _load_openat2()
        _openat2_known = True
    return _openat2


def use_openat2(enabled: bool) -> None:
    """Force the component walk (``False``) or re-probe ``openat2`` (``True``, Linux only:
    the system call number means something else elsewhere); for tests."""
    global _openat2, _openat2_known
    _openat2 = None
    _openat2_known = not (enabled and platform.system() == "Linux")


def mechanism() -> str:
    """Which resolution this process uses: ``openat2``, ``walk`` or ``by-name`` (Windows)."""
    if not HELD:
        return "by-name"
    return "openat2" if _openat2_fn() is not None else "walk"


# --- opening beneath a held directory ----------------------------------------------


def _check(rel: str) -> None:
    """Refuse what is not a clean relative path (no ``..``, ``.``, empty or absolute part)."""
    if rel:
        framed = os.sep + rel + os.sep
        if (
            f"{os.sep}..{os.sep}" in framed
            or f"{os.sep}.{os.sep}" in framed
            or os.sep * 2 in framed
            or (os.altsep and os.altsep in rel)
        ):
            raise ValueError(f"not a clean relative path: {rel!r}")


def _parts(rel: str) -> list[str]:
    _check(rel)
    return rel.split(os.sep) if rel else []


def open_beneath(dirfd: int, rel: str, flags: int, mode: int = 0o666) -> int:
    """Open ``rel`` below the directory ``dirfd``; the final component is never followed.

    ``rel`` is relative, without ``..`` (``""`` is the directory itself). Raises
    `PathChanged` when a component turned into a symlink (leading outside, or at
    all, see the module docstring), else the call's own `OSError`.
    """
    _check(rel)
    flags |= O_NOFOLLOW | O_CLOEXEC
    if os.sep not in rel:  # one component (or none): a plain openat, already race-free
        try:
            return os.open(rel or ".", flags, mode, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathChanged(rel, errno.ELOOP) from None
            raise
    fn = _openat2_fn()
    if fn is not None:
        try:
            return fn(dirfd, rel, flags, mode)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ELOOP):
                raise PathChanged(rel, exc.errno) from None
            raise
    parts = rel.split(os.sep)
    cur = dirfd
    try:
        for part in parts[:-1]:
            nxt = open_subdir(cur, part)
            if cur != dirfd:
                os.close(cur)
            cur = nxt
        return os.open(parts[-1], flags, mode, dir_fd=cur)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV):
            raise PathChanged(rel, exc.errno) from None
        raise
    finally:
        if cur != dirfd:
            os.close(cur)


def open_subdir(dirfd: int, name: str) -> int:
    """Open the directory ``name`` in ``dirfd`` without following a link there; a link
    raises `PathChanged` (the kernel says ``ENOTDIR`` for a link with ``O_DIRECTORY``)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dirfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(dirfd, name)):
            raise PathChanged(name, errno.ELOOP) from None
        raise


def _is_link(dirfd: int, name: str) -> bool:
    try:
        return stat_mod.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


class HeldDir:
    """A directory held open, and the operations on names directly inside it.

    No operation follows a symlink in the name it is given. POSIX: ``fd`` is the
    descriptor; without descriptors (Windows) ``fd`` is ``None`` and names are joined
    to ``path``. Use as a context manager, or `close` it; a borrowed one
    (``owned=False``, e.g. an anchor's) is never closed here.
    """

    __slots__ = ("_release", "fd", "owned", "path")

    def __init__(
        self,
        path: str,
        fd: int | None,
        owned: bool = True,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self.fd = fd
        self.owned = owned
        self._release = release

    def _at(self, name: str) -> tuple[str, int | None]:
        if self.fd is None:
            if HELD:  # closed: never fall back to the name
                raise OSError(errno.EBADF, "the held directory is closed", self.path)
            return os.path.join(self.path, name), None
        return name, self.fd

    def join(self, name: str) -> str:
        return os.path.join(self.path, name)

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        path, fd = self._at(name)
        return os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode, dir_fd=fd)

    def stat(self, name: str, *, follow: bool = False) -> os.stat_result:
        path, fd = self._at(name)
        return os.stat(path, dir_fd=fd, follow_symlinks=follow)

    def exists(self, name: str) -> bool:
        try:
            self.stat(name)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def unlink(self, name: str) -> None:
        path, fd = self._at(name)
        os.unlink(path, dir_fd=fd)

    def unlink_quietly(self, name: str) -> None:
        try:
            self.unlink(name)
        except OSError:
            pass

    def mkdir(self, name: str, mode: int = 0o777) -> None:
        path, fd = self._at(name)
        os.mkdir(path, mode, dir_fd=fd)

    def rmdir(self, name: str) -> None:
        path, fd = self._at(name)
        os.rmdir(path, dir_fd=fd)

    def readlink(self, name: str) -> str:
        path, fd = self._at(name)
        return os.readlink(path, dir_fd=fd)

    def replace(self, name: str, other: HeldDir, other_name: str) -> None:
        """Rename ``name`` to ``other/other_name``, replacing what is there."""
        src, sfd = self._at(name)
        dst, dfd = other._at(other_name)
        os.replace(src, dst, src_dir_fd=sfd, dst_dir_fd=dfd)

    def link(self, name: str, other: HeldDir, other_name: str) -> None:
        """Hard-link ``name`` as ``other/other_name`` (never following; EEXIST if taken)."""
        src, sfd = self._at(name)
        dst, dfd = other._at(other_name)
        os.link(src, dst, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)

    def _self(self) -> int | str:
        if self.fd is None:
            if HELD:
                raise OSError(errno.EBADF, "the held directory is closed", self.path)
            return self.path
        return self.fd

    def names(self) -> list[str]:
        with _LISTING:
            return os.listdir(self._self())

    def scandir(self) -> list[os.DirEntry[str]]:
        """The entries, sorted by name. Their ``is_*`` and ``stat`` answers are only valid
        while this directory is open."""
        with _LISTING, os.scandir(self._self()) as it:
            return sorted(it, key=lambda e: e.name)

    def sub(self, name: str) -> HeldDir:
        """The child directory ``name``, held (a symlink there fails with `PathChanged`)."""
        if self.fd is None:
            return _by_name_dir(os.path.join(self._self(), name))  # type: ignore[arg-type]
        return HeldDir(os.path.join(self.path, name), open_subdir(self.fd, name))

    def fsync(self) -> None:
        """Make renames and links in this directory durable (best effort)."""
        try:
            if self.fd is not None:
                os.fsync(self.fd)
                return
            if HELD:
                return
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        """Close the descriptor (a borrowed one is handed back instead); idempotent."""
        fd, self.fd = self.fd, None
        if fd is not None and self.owned:
            os.close(fd)
        release, self._release = self._release, None
        if release is not None:
            release()

    def __enter__(self) -> HeldDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HeldDir({self.path!r}, fd={self.fd})"


def open_dir(path: str) -> HeldDir:
    """Hold the directory ``path`` as named (symlinks in it followed, as the OS does)."""
    if not HELD:
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        return HeldDir(path, None)
    return HeldDir(path, os.open(path, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC))


class Anchor:
    """A root directory held open: the descriptor every confined path resolves beneath.

    Opened at the first use (a root that does not exist yet is opened once it does)
    and never re-opened, so a root is the directory it was at that moment. `close`
    (the session's end) lets the descriptor go once no call is using it: a call in
    flight never finds its descriptor number reused for another directory.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._users = 0
        self._closed = False
        self._lock = threading.Lock()
        self._finalizer: Any = None

    def _acquire(self) -> int:
        with self._lock:
            if self._closed:
                raise OSError(errno.EBADF, "the workspace is closed", self.path)
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                self._finalizer = weakref.finalize(self, _close_quietly, self._fd)
            self._users += 1
            return self._fd

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._closed and self._users == 0:
                self._let_go()

    def _let_go(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # closes the descriptor, once
            self._finalizer = None
        self._fd = None

    def close(self) -> None:
        """No new use from now on; the descriptor closes when the last one ends."""
        with self._lock:
            self._closed = True
            if self._users == 0:
                self._let_go()

    @property
    def closed(self) -> bool:
        return self._closed

    def ensure_open(self) -> None:
        """Open the root now if it exists (raises `OSError` if it does not)."""
        if HELD:
            self._acquire()
            self._release()

    def held(self) -> HeldDir:
        """The root as a borrowed `HeldDir`: close it to hand the root back (the root's
        own descriptor stays open)."""
        if not HELD:
            return _by_name_dir(self.path)
        return HeldDir(self.path, self._acquire(), owned=False, release=self._release)

    def open(self, rel: str, flags: int, mode: int = 0o666) -> int:
        """``os.open`` of ``rel`` beneath the root (see `open_beneath`)."""
        if not HELD:
            return os.open(
                os.path.join(self.path, rel) if rel else self.path, flags | O_CLOEXEC, mode
            )
        fd = self._acquire()
        try:
            return open_beneath(fd, rel, flags, mode)
        finally:
            self._release()

    def stat(self, rel: str = "") -> os.stat_result:
        """The ``lstat`` of ``rel`` (``""``: the root), taken in its directory opened
        beneath the root."""
        if not HELD:
            return os.lstat(os.path.join(self.path, rel) if rel else self.path)
        fd = self._acquire()
        try:
            if not rel:
                return os.fstat(fd)
            head, name = os.path.split(rel)
            if not head:
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
            parent = open_beneath(fd, head, LOOKUP_FLAGS)
            try:
                return os.stat(name, dir_fd=parent, follow_symlinks=False)
            finally:
                os.close(parent)
        finally:
            self._release()

    def dir(self, rel: str, flags: int = DIR_FLAGS) -> HeldDir:
        """The directory ``rel`` below the root, held (``""``: the root, borrowed);
        ``flags`` `LOOKUP_FLAGS`: held only to stat and open names in it."""
        if not rel:
            return self.held()
        path = os.path.join(self.path, rel)
        if not HELD:
            return _by_name_dir(path)
        return HeldDir(path, self.open(rel, flags))

    def parent(self, rel: str, *, lookup: bool = False) -> tuple[HeldDir, str]:
        """The held parent directory of ``rel`` and the final name (``rel`` not ``""``);
        with ``lookup``, held only to stat and open the name (not listed, not synced)."""
        head, name = os.path.split(rel)
        if not name:
            raise IsADirectoryError(errno.EISDIR, "a root has no parent inside it", self.path)
        return self.dir(head, LOOKUP_FLAGS if lookup else DIR_FLAGS), name

    def make_dirs(self, rel: str) -> tuple[HeldDir, list[str]]:
        """Hold the directory ``rel`` below the root, creating missing components one by
        one (umask applies). Returns it and the relative paths of the directories made."""
        made: list[str] = []
        cur = self.held()
        done: list[str] = []
        try:
            for part in _parts(rel):
                try:
                    nxt = cur.sub(part)
                except FileNotFoundError:
                    try:
                        cur.mkdir(part)
                        made.append(os.path.join(*done, part))
                    except FileExistsError:
                        pass
                    nxt = cur.sub(part)
                cur.close()
                cur = nxt
                done.append(part)
        except BaseException:
            cur.close()
            self.remove_dirs(made)
            raise
        return cur, made

    def remove_dirs(self, made: list[str]) -> None:
        """Remove directories (relative paths) deepest first, where they are still empty."""
        for rel in sorted(made, key=len, reverse=True):
            try:
                parent, name = self.parent(rel)
                with parent:
                    parent.rmdir(name)
            except OSError:
                pass

    def __repr__(self) -> str:
        return f"Anchor({self.path!r})"


def _by_name_dir(path: str) -> HeldDir:
    """Without descriptors: the directory ``path`` if it is one (not through a final link)."""
    if os.path.islink(path):
        raise PathChanged(path, errno.ELOOP)
    if not os.path.isdir(path):
        if not os.path.lexists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    return HeldDir(path, None)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def walk_dirs(
    top: HeldDir, prune: Callable[[str], bool] | None = None, stop: Callable[[], bool] | None = None
) -> Iterator[tuple[HeldDir, list[str]]]:
    """Every directory below ``top`` (itself first) with its file names, depth first.

    Each child is opened relative to its parent without following a symlink, so a
    swap during the walk skips that directory instead of leaving the tree. ``prune(name)``
    keeps a directory out; ``stop()`` ends the walk. A yielded directory is only valid
    until the next step.
    """
    stack: list[HeldDir] = []
    current: HeldDir | None = top
    try:
        while current is not None:
            if stop is not None and stop():
                return
            try:
                entries = current.scandir()
            except OSError:
                entries = []
            files, dirs = [], []
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if prune is None or not prune(entry.name):
                            dirs.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.name)
                except OSError:
                    continue
            yield current, files
            for name in reversed(dirs):
                try:
                    stack.append(current.sub(name))
                except OSError:
                    continue
            if current is not top:
                current.close()
            current = None
            current = stack.pop() if stack else None
    finally:
        if current is not None and current is not top:
            current.close()
        for held in stack:
            held.close()
