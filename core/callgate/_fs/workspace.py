"""Workspace confinement: where a session's tools may read and write (files.md §2).

A path is judged by its canonical form (every existing symlink resolved, the
final one included), compared against the roots at a component boundary, so
``/w/proj-2/x`` is never inside ``/w/proj`` and a symlink cannot lead out.

The answer is a `ResolvedPath`: the root it lies in (held open, `_fs.confine.Anchor`)
and the path below it. Its `open`, `stat`, `parent` and `child` resolve that
relative path again beneath the held root on every use, so a directory swapped for
a symlink after the check makes the call fail instead of leading it outside
(`_fs.confine`). ``path`` stays the canonical string for keys and messages; handing
it to ``open()`` yourself gives up that guarantee.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

from .._model.errors import ToolError
from .confine import READ_FLAGS, Anchor, HeldDir, open_dir


@attrs.frozen
class ResolvedPath:
    """A confined path: ``path`` is canonical (the ledger's and the leases' key),
    ``display`` is what messages show (workspace-relative with ``/`` when inside, else
    absolute), ``lexical`` is the cleaned absolute path before symlinks were resolved.

    ``anchor`` is the held root the path lies in and ``rel`` the path below it; system
    calls go through `open`, `stat`, `parent`, `opendir` (race-free: see `_fs.confine`).
    A `ResolvedPath` made by hand, without an anchor, uses ``path`` by name.
    """

    path: str
    display: str
    lexical: str
    rel: str = attrs.field(default="", eq=False, repr=False)
    anchor: Anchor | None = attrs.field(default=None, eq=False, repr=False)

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path

    @property
    def confined(self) -> bool:
        """Whether system calls on this path resolve beneath a held root."""
        return self.anchor is not None

    def open(self, flags: int = READ_FLAGS, mode: int = 0o666) -> int:
        """An ``os.open`` of this path beneath its root; the final component is never
        followed. Returns the descriptor (the caller closes it)."""
        if self.anchor is None:
            return os.open(self.path, flags | getattr(os, "O_NOFOLLOW", 0), mode)
        return self.anchor.open(self.rel, flags, mode)

    def stat(self) -> os.stat_result:
        """The ``lstat`` of this path, taken in its held parent directory."""
        if self.anchor is None:
            return os.lstat(self.path)
        return self.anchor.stat(self.rel)

    def parent(self, *, lookup: bool = False) -> tuple[HeldDir, str]:
        """The parent directory, held (close it), and this path's final name; ``lookup``:
        held only to stat and open that name (no listing, no fsync; on Linux no inotify
        event for a watcher of the tree)."""
        if self.anchor is None:
            head, name = os.path.split(self.path)
            return open_dir(head), name
        return self.anchor.parent(self.rel, lookup=lookup)

    def opendir(self) -> HeldDir:
        """This path as a held directory (close it)."""
        if self.anchor is None:
            return open_dir(self.path)
        return self.anchor.dir(self.rel)

    def child(self, rel: str) -> ResolvedPath:
        """The path ``rel`` (relative, no ``..``, no symlinks expected) below this one,
        confined to the same root: what a walk below a confined directory yields."""
        sub = rel.replace("/", os.sep)
        display = (
            rel
            if self.display == "."
            else (self.display.rstrip("/") + "/" + rel.replace(os.sep, "/"))
        )
        return ResolvedPath(
            os.path.join(self.path, sub),
            display,
            os.path.join(self.lexical, sub),
            os.path.join(self.rel, sub) if self.rel else sub,
            self.anchor,
        )


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

    def __init__(
        self,
        root: str | os.PathLike[str],
        extra_roots: Sequence[str] = (),
        extra_read_roots: Sequence[str] = (),
    ) -> None:
        self.root = _canonical_root(os.fspath(root))
        base = self.root
        self.write_roots: tuple[str, ...] = (
            base,
            *(_canonical_root(os.path.join(base, r)) for r in extra_roots),
        )
        self.read_roots: tuple[str, ...] = (
            *self.write_roots,
            *(_canonical_root(os.path.join(base, r)) for r in extra_read_roots),
        )
        # every root held open from now on: later calls resolve beneath these
        self._anchors = {r: Anchor(r) for r in self.read_roots}
        for anchor in self._anchors.values():
            try:
                anchor.ensure_open()
            except OSError:
                pass  # a root that does not exist yet is held once it does

    def lexical(self, path: str | os.PathLike[str]) -> str:
        """Join to the root when relative, then clean ``.``/``..`` lexically (no ``~``)."""
        raw = os.fspath(path)
        if "\x00" in raw:
            raise self._outside(raw.replace("\x00", "\\0"))
        joined = raw if os.path.isabs(raw) else os.path.join(self.root, raw)
        return os.path.normpath(joined)

    def display(self, path: str | os.PathLike[str]) -> str:
        """The message form of a path: workspace-relative with ``/`` when inside, else absolute."""
        lexical = (
            self.lexical(path)
            if not os.path.isabs(os.fspath(path))
            else os.path.normpath(os.fspath(path))
        )
        return self._display(lexical)

    def _display(self, lexical: str) -> str:
        """`display` of a path already made `lexical` (absolute, normalized)."""
        if within(lexical, self.root):
            # what ``os.path.relpath`` gives for a normalized path inside the root (the
            # root's own components dropped), without its two abspath/split passes
            rel = lexical[len(self.root) :].lstrip(os.sep)
            return rel.replace(os.sep, "/") if rel else "."
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
        display = self._display(lexical)
        roots = self.write_roots if write else self.read_roots
        try:
            canonical = os.path.realpath(lexical)
        except (OSError, ValueError):
            raise self._outside(display, roots) from None
        return self._anchored(canonical, display, lexical, roots)

    def _anchored(
        self, canonical: str, display: str, lexical: str, roots: Sequence[str]
    ) -> ResolvedPath:
        root = self._root_of(canonical, roots)
        if root is None:
            raise self._outside(display, roots)
        rel = canonical[len(root) :].lstrip(os.sep)
        return ResolvedPath(canonical, display, lexical, rel, self._anchors[root])

    @staticmethod
    def _root_of(canonical: str, roots: Sequence[str]) -> str | None:
        """The innermost root containing ``canonical`` (the tightest confinement)."""
        best = None
        for root in roots:
            if within(canonical, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def anchor(self, root: str) -> Anchor:
        """The held directory of one of the roots (``root`` as in ``read_roots``)."""
        return self._anchors[root]

    def close(self) -> None:
        """Let the held roots go (the session has ended): each closes once no call uses
        it; confined paths of this workspace fail from then on instead of re-opening."""
        for anchor in self._anchors.values():
            anchor.close()

    def entry_path(self, resolved: ResolvedPath) -> str:
        """The path of the directory entry itself: parents resolved, the final name not
        followed (a symlink there stays the link; for a regular file it is ``path``)."""
        if resolved.path == resolved.lexical:
            # resolving changed nothing: no component of the path, so none of its parents,
            # is a symlink; the entry is the path (no second walk of every parent)
            return resolved.path
        parent, name = os.path.split(resolved.lexical)
        if not name:
            return resolved.path
        return os.path.join(os.path.realpath(parent), name)

    def entry(self, resolved: ResolvedPath, *, write: bool = False) -> ResolvedPath:
        """`entry_path` as a confined `ResolvedPath`: the directory entry itself (a final
        symlink stays the link). Its directory must be inside the roots too."""
        path = self.entry_path(resolved)
        if path == resolved.path:
            return resolved
        return self._anchored(
            path, resolved.display, resolved.lexical, self.write_roots if write else self.read_roots
        )

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


def root_path(directory: str | os.PathLike[str]) -> ResolvedPath:
    """A directory as a root of its own: held as named (from the first use on), and every
    path below it (`ResolvedPath.child`) confined beneath it, race-free. For walks of a
    tree that is not a workspace root; a workspace's own roots come from `Workspace.resolve`.
    """
    path = os.path.abspath(os.fspath(directory))
    return ResolvedPath(path, path, path, "", Anchor(path))
