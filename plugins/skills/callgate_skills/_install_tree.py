"""What an ``install_source`` source holds, read into memory and checked; nothing runs.

A source is a folder (a local git checkout is one: ``.git`` is skipped, never run),
a file (a ``SKILL.md``, a Markdown skill, an ``.mcp.json`` / Claude Desktop config),
or a ``.zip``. Everything is read into a `Tree` (relative path → bytes, mode bits)
under fixed limits, so a plan and its apply see the same bytes and a zip is never
extracted anywhere before it is checked. A zip entry with an absolute or ``..``
path (zip-slip), a symlink, or sizes past the limits is refused; a symlink in a
folder is skipped and reported.

The source is read as the file tools read (`callgate.paths`): the folder is held open,
every name is opened beneath its held directory without following a symlink, and what
was opened is judged by its descriptor. A file swapped for a link to something outside
between the listing and the read is skipped; nothing outside the source is ever read.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from collections.abc import Callable

import attrs
from callgate import ToolError
from callgate.paths import READ_FLAGS, HeldDir, PathChanged, ResolvedPath

MAX_FILES = 2000
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_TOTAL_BYTES = 20 * 1024 * 1024
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".hg", ".svn"})


def source_error(code: str, message: str, kind: str = "invalid_arguments") -> ToolError:
    return ToolError(kind, f"INSTALL_{code}: {message}", f"INSTALL_{code}", {"executed": False})


@attrs.frozen
class Entry:
    data: bytes
    executable: bool


@attrs.frozen
class Tree:
    """A source's files by ``/``-separated relative path, and what was left out."""

    files: dict[str, Entry]
    skipped: tuple[str, ...] = ()
    git_head: str | None = None

    def under(self, prefix: str) -> dict[str, Entry]:
        """The files below folder ``prefix`` (``""``: all), relative to it."""
        if not prefix:
            return dict(self.files)
        head = prefix.rstrip("/") + "/"
        return {p[len(head) :]: e for p, e in self.files.items() if p.startswith(head)}


class _Budget:
    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0

    def take(self, name: str, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES:
            raise source_error("TOO_LARGE", f"the source has more than {MAX_FILES} files")
        if size > MAX_FILE_BYTES:
            raise source_error(
                "TOO_LARGE", f"{name} is {size} bytes; at most {MAX_FILE_BYTES} per file"
            )
        if self.bytes > MAX_TOTAL_BYTES:
            raise source_error("TOO_LARGE", f"the source is over {MAX_TOTAL_BYTES} bytes")


def _read_held(held: HeldDir, name: str, rel: str) -> tuple[bytes, bool] | str:
    """The bytes of the regular file ``name`` in ``held`` and whether it is executable, or
    why it was skipped. Opened beneath the held folder without following a symlink, and
    judged by the opened descriptor: a swap after the listing reads nothing outside."""
    try:
        fd = held.open(name, READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink"
        return f"unreadable: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size > MAX_FILE_BYTES:
            raise source_error(
                "TOO_LARGE", f"{rel} is {st.st_size} bytes; at most {MAX_FILE_BYTES} per file"
            )
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise source_error("TOO_LARGE", f"{rel} grew past {MAX_FILE_BYTES} bytes")
    return data, bool(st.st_mode & 0o111)


def _git_head(top: HeldDir) -> str | None:
    """The checked-out ref or commit named by ``.git/HEAD`` (read, never run; a symlinked
    ``.git`` or ``HEAD`` is not followed)."""
    try:
        with top.sub(".git") as git:
            read = _read_held(git, "HEAD", ".git/HEAD")
    except (OSError, ToolError):
        return None
    if isinstance(read, str):
        return None
    return read[0][:200].decode("utf-8", "replace").strip() or None


def read_folder(root: ResolvedPath, denied: Callable[[str], bool] | None = None) -> Tree:
    """Every regular file below the folder ``root``; symlinks, other kinds and ``denied(path)``
    files (the read deny list) are left out and reported.

    Every directory is held open and every name opened beneath it without following a
    symlink (`callgate.paths`), so a file or folder swapped for a link to something
    outside after it was listed is skipped, never read.
    """
    budget = _Budget()
    files: dict[str, Entry] = {}
    skipped: list[str] = []
    top = root.opendir()
    with top:
        stack: list[tuple[str, HeldDir | None]] = [("", None)]
        while stack:
            prefix, held = stack.pop()
            current = top if held is None else held
            try:
                entries = current.scandir()
            except OSError:
                entries = []
            subdirs: list[tuple[str, HeldDir]] = []
            try:
                for entry in entries:
                    rel = prefix + entry.name
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                        is_link = entry.is_symlink()
                    except OSError:
                        continue
                    if is_dir and entry.name in SKIP_DIRS:
                        continue
                    if is_link:
                        skipped.append(f"{rel} (a symlink)")
                        continue
                    if is_dir:
                        try:
                            subdirs.append((rel + "/", current.sub(entry.name)))
                        except PathChanged:
                            skipped.append(f"{rel} (a symlink)")
                        except OSError:
                            skipped.append(f"{rel} (unreadable)")
                        continue
                    try:
                        regular = entry.is_file(follow_symlinks=False)
                    except OSError:
                        continue
                    if not regular:  # a FIFO or a device is never opened
                        skipped.append(f"{rel} (not a regular file)")
                        continue
                    if denied is not None and denied(current.join(entry.name)):
                        skipped.append(f"{rel} (on the read deny list)")
                        continue
                    read = _read_held(current, entry.name, rel)
                    if isinstance(read, str):
                        skipped.append(f"{rel} ({read})")
                        continue
                    budget.take(rel, len(read[0]))
                    files[rel] = Entry(*read)
            except BaseException:
                for _, sub in subdirs:
                    sub.close()
                for _, sub in stack:
                    if sub is not None:
                        sub.close()
                raise
            finally:
                if held is not None:
                    held.close()
            stack.extend(reversed(subdirs))
        head = _git_head(top)
    return Tree(dict(sorted(files.items())), tuple(skipped), head)


def _zip_path(name: str) -> str:
    """A zip member's safe relative path, or a refusal (zip-slip)."""
    clean = name.replace("\\", "/")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":") or ".." in parts:
        raise source_error(
            "UNSAFE_ZIP",
            f"zip entry {name!r} points outside the archive "
            "(an absolute or .. path); nothing was installed",
        )
    return "/".join(parts)


def _open_regular(path: ResolvedPath) -> int:
    """A descriptor of the regular file ``path``, opened beneath its root without following a
    final symlink."""
    try:
        fd = path.open(READ_FLAGS)
    except OSError as exc:
        raise source_error("UNREADABLE", f"{path.display} cannot be read "
                           f"({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise source_error("UNREADABLE", f"{path.display} is not a regular file")
    return fd


def read_zip(path: ResolvedPath) -> Tree:
    budget = _Budget()
    files: dict[str, Entry] = {}
    fh = os.fdopen(_open_regular(path), "rb")
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError) as exc:
        fh.close()
        raise source_error("BAD_ZIP", f"not a readable zip archive ({exc})") from None
    with fh, archive:
        infos = archive.infolist()
        for info in infos:
            rel = _zip_path(info.filename)
            mode = (info.external_attr >> 16) & 0xFFFF
            if stat.S_ISLNK(mode):
                raise source_error(
                    "UNSAFE_ZIP", f"zip entry {info.filename!r} is a symlink; nothing was installed"
                )
            if info.is_dir() or not rel:
                continue
            if rel.split("/")[0] in SKIP_DIRS or any(p in SKIP_DIRS for p in rel.split("/")):
                continue
            budget.take(rel, info.file_size)
            with archive.open(info) as member:
                data = member.read(MAX_FILE_BYTES + 1)
            if len(data) != info.file_size:
                raise source_error(
                    "UNSAFE_ZIP", f"zip entry {info.filename!r} does not hold the size it declares"
                )
            files[rel] = Entry(data, bool(mode & 0o111))
    return Tree(_strip_single_top(files))


def _strip_single_top(files: dict[str, Entry]) -> dict[str, Entry]:
    """A zip of one folder (``repo-main/...``) reads as that folder's contents, unless the
    folder is itself a skill (its SKILL.md names it)."""
    tops = {p.split("/", 1)[0] for p in files}
    if len(tops) != 1 or all("/" not in p for p in files):
        return files
    (top,) = tops
    if f"{top}/SKILL.md" in files:
        return files
    return {p.split("/", 1)[1]: e for p, e in files.items()}


def read_file(path: ResolvedPath) -> Tree:
    with os.fdopen(_open_regular(path), "rb") as fh:
        st = os.fstat(fh.fileno())
        if st.st_size > MAX_FILE_BYTES:
            raise source_error(
                "TOO_LARGE", f"{path.display} is {st.st_size} bytes; at most {MAX_FILE_BYTES}"
            )
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise source_error("TOO_LARGE", f"{path.display} grew past {MAX_FILE_BYTES} bytes")
    return Tree({os.path.basename(path.path): Entry(data, bool(st.st_mode & 0o111))})
