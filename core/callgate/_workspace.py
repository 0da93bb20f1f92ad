"""Workspace confinement: where a session's tools may read and write (files.md §2).

A path is judged by its canonical form (every existing symlink resolved, the
final one included), compared against the roots at a component boundary, so
``/w/proj-2/x`` is never inside ``/w/proj`` and a symlink cannot lead out.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

import attrs

from ._errors import ToolError


@attrs.frozen
class ResolvedPath:
    """A confined path: ``path`` is canonical (use it for system calls), ``display`` is what
    messages show (workspace-relative with ``/`` when inside, else absolute), ``lexical`` is the
    cleaned absolute path before symlinks were resolved."""

    path: str
    display: str
    lexical: str

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path


def _canonical_root(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def within(path: str, root: str) -> bool:
    """True if canonical ``path`` is ``root`` or continues it at a component boundary."""
    p, r = os.path.normcase(path), os.path.normcase(root)
    if p == r:
        return True
    if not r.endswith(os.sep):
        r += os.sep
    return p.startswith(r)


class Workspace:
    """The roots of one session and the resolution rules that confine every path."""

    def __init__(self, root: str | os.PathLike[str], extra_roots: Sequence[str] = (),
                 extra_read_roots: Sequence[str] = ()) -> None:
        self.root = _canonical_root(os.fspath(root))
        base = self.root
        self.write_roots: tuple[str, ...] = (base, *(_canonical_root(os.path.join(base, r))
                                                      for r in extra_roots))
        self.read_roots: tuple[str, ...] = (
            *self.write_roots,
            *(_canonical_root(os.path.join(base, r)) for r in extra_read_roots),
        )

    def lexical(self, path: str | os.PathLike[str]) -> str:
        """Join to the root when relative, then clean ``.``/``..`` lexically (no ``~``)."""
        raw = os.fspath(path)
        if "\x00" in raw:
            raise self._outside(raw.replace("\x00", "\\0"))
        joined = raw if os.path.isabs(raw) else os.path.join(self.root, raw)
        return os.path.normpath(joined)

    def display(self, path: str | os.PathLike[str]) -> str:
        """The message form of a path: workspace-relative with ``/`` when inside, else absolute."""
        lexical = self.lexical(path) if not os.path.isabs(os.fspath(path)) else \
            os.path.normpath(os.fspath(path))
        if within(lexical, self.root):
            rel = os.path.relpath(lexical, self.root)
            return "." if rel == "." else rel.replace(os.sep, "/")
        return lexical

    def relative(self, path: str | os.PathLike[str]) -> str:
        """Alias of `display` for plugin code that wants a workspace-relative name."""
        return self.display(path)

    def canonical(self, path: str | os.PathLike[str]) -> str:
        """Resolve every existing symlink (the final component too), keep the missing rest."""
        return os.path.realpath(self.lexical(path))

    def resolve(self, path: str | os.PathLike[str], *, write: bool = False) -> ResolvedPath:
        """The confined `ResolvedPath` of ``path``, or `ToolError` ``outside_workspace``.

        ``write=True`` checks the write roots (mutations), else the read roots.
        The answer is the same whether or not the path exists.
        """
        lexical = self.lexical(path)
        display = self.display(lexical)
        roots = self.write_roots if write else self.read_roots
        try:
            canonical = os.path.realpath(lexical)
        except (OSError, ValueError):
            raise self._outside(display, roots) from None
        if not any(within(canonical, r) for r in roots):
            raise self._outside(display, roots)
        return ResolvedPath(canonical, display, lexical)

    def entry_path(self, resolved: ResolvedPath) -> str:
        """The path of the directory entry itself: parents resolved, the final name not
        followed (a symlink there stays the link; for a regular file it is ``path``)."""
        parent, name = os.path.split(resolved.lexical)
        if not name:
            return resolved.path
        return os.path.join(os.path.realpath(parent), name)

    def is_within(self, path: str | os.PathLike[str], *, write: bool = False) -> bool:
        try:
            self.resolve(path, write=write)
        except ToolError:
            return False
        return True

    def _outside(self, display: str, roots: Sequence[str] | None = None) -> ToolError:
        shown = ", ".join(roots if roots is not None else self.write_roots)
        return ToolError(
            "outside_workspace",
            f"FS_OUTSIDE_WORKSPACE: {display} resolves outside the workspace ({shown}); "
            "use a path inside it",
            "FS_OUTSIDE_WORKSPACE",
        )


def posix_rel(path: str, root: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators."""
    return posixpath.join(*os.path.relpath(path, root).split(os.sep))
