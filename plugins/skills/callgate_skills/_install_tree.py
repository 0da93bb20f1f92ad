"""What an ``install_source`` source holds, read into memory and checked; nothing runs.

A source is a folder (a local git checkout is one: ``.git`` is skipped, never run),
a file (a ``SKILL.md``, a Markdown skill, an ``.mcp.json`` / Claude Desktop config),
or a ``.zip``. Everything is read into a `Tree` (relative path → bytes, mode bits)
under fixed limits, so a plan and its apply see the same bytes and a zip is never
extracted anywhere before it is checked. A zip entry with an absolute or ``..``
path (zip-slip), a symlink, or sizes past the limits is refused; a symlink in a
folder is skipped and reported.
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Callable, Iterator

import attrs
from callgate import ToolError

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


def _walk(root: str) -> Iterator[tuple[str, str]]:
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = os.path.relpath(current, root)
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(current, d))]:
            path = os.path.join(current, name)
            yield ("" if rel == "." else rel.replace(os.sep, "/") + "/") + name, path


def _git_head(root: str) -> str | None:
    """The checked-out ref or commit named by ``.git/HEAD`` (read, never run)."""
    try:
        with open(os.path.join(root, ".git", "HEAD"), encoding="utf-8") as fh:
            return fh.read(200).strip() or None
    except OSError:
        return None


def read_folder(root: str, denied: Callable[[str], bool] | None = None) -> Tree:
    """Every regular file below ``root``; ``denied(path)`` files (the read deny list) are
    left out and reported, like symlinks."""
    budget = _Budget()
    files: dict[str, Entry] = {}
    skipped: list[str] = []
    for rel, path in _walk(root):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            skipped.append(f"{rel} (a symlink)")
            continue
        if denied is not None and denied(path):
            skipped.append(f"{rel} (on the read deny list)")
            continue
        if not stat.S_ISREG(st.st_mode):
            skipped.append(f"{rel} (not a regular file)")
            continue
        budget.take(rel, st.st_size)
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise source_error("TOO_LARGE", f"{rel} grew past {MAX_FILE_BYTES} bytes")
        files[rel] = Entry(data, bool(st.st_mode & 0o111))
    return Tree(files, tuple(skipped), _git_head(root))


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


def read_zip(path: str) -> Tree:
    budget = _Budget()
    files: dict[str, Entry] = {}
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise source_error("BAD_ZIP", f"not a readable zip archive ({exc})") from None
    with archive:
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
            with archive.open(info) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
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


def read_file(path: str) -> Tree:
    st = os.stat(path)
    if st.st_size > MAX_FILE_BYTES:
        raise source_error("TOO_LARGE", f"{path} is {st.st_size} bytes; at most {MAX_FILE_BYTES}")
    with open(path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    return Tree({os.path.basename(path): Entry(data, bool(st.st_mode & 0o111))})
