"""Walking a workspace the way every tool agrees on (search.md §1).

One walk order (path order: component by component, each by code point, the
order ``rg --sort path`` prints), one prune list (`callgate.paths.PRUNE`, shared
with the core's stale-temp sweep), one reading of ``.gitignore`` files. Symlinks are never
followed: a walk lists the real tree below its root. The search tools and the
``code`` plugin walk through this module, so they skip exactly the same files.

The walk is race-free: it holds each directory open and opens the next relative
to it without following a symlink (`HeldDir`), and it yields each file as a
`ResolvedPath` confined beneath the walk's root, so a directory swapped for a
symlink mid-walk is skipped, or fails to open, instead of leading outside.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

# PRUNE: directory names that tools never walk into unless the caller names them (one list
# for every walk, the core's stale-temp sweep included).
from callgate.paths import PRUNE, READ_FLAGS, HeldDir, PathChanged, ResolvedPath, root_path

#: One ``.gitignore`` file's rules in order: (ignores, compiled pathspec regex).
Spec = tuple[tuple[bool, re.Pattern[str]], ...]


def join_rel(parent: str, name: str) -> str:
    """``parent/name`` with ``""`` meaning the root."""
    return f"{parent}/{name}" if parent else name


def _compile(lines: list[str]) -> Spec | None:
    """Compile a ``.gitignore`` with pathspec's git rules; unreadable lines are dropped."""
    import pathspec  # ~13 ms: loaded when a walk first meets a .gitignore, not at boot

    rules: list[tuple[bool, re.Pattern[str]]] = []
    for line in lines:
        try:
            pattern = pathspec.GitIgnoreSpec.from_lines([line]).patterns[0]
        except Exception:
            continue
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue
        rules.append((bool(pattern.include), regex))
    return tuple(rules) or None


def _matches_itself(regex: re.Pattern[str], sub: str) -> bool:
    """Whether a rule matches the entry ``sub`` itself (``/``-terminated for a directory).

    pathspec's regexes also match everything inside a matching directory; git
    judges each path component on its own, and the walk never enters an
    ignored directory, so only a match of the entry itself counts here.
    """
    m = regex.match(sub)
    if m is None:
        return False
    if "ps_d" in regex.groupindex:
        slash = m.end("ps_d")
        return slash == len(sub) if slash != -1 else m.end() == len(sub)
    # "dir/**"-style rules: everything strictly inside the directory
    return m.end() < len(sub) or not sub.endswith("/")


def _judge(spec: Spec, sub: str) -> bool | None:
    """The last rule of ``spec`` matching ``sub`` decides; ``None`` when none matches."""
    verdict = None
    for ignores, regex in spec:
        if (verdict is None or verdict != ignores) and _matches_itself(regex, sub):
            verdict = ignores
    return verdict


class IgnoreRules:
    """The ``.gitignore`` files of one tree, read on demand and cached per directory.

    Git semantics per path component: the rules of the root's file and of each
    directory down to the entry apply, deeper files win over shallower ones,
    later lines over earlier ones, and ``!`` re-includes. Nothing else is read
    (no global excludes, no ``.git/info/exclude``, no files above the root).
    """

    def __init__(self, root: str | ResolvedPath) -> None:
        self.root = os.fspath(root)
        self._base = root if isinstance(root, ResolvedPath) else root_path(self.root)
        self._specs: dict[str, Spec | None] = {}
        self._dir_verdicts: dict[str, bool] = {}
        self._chains: dict[str, tuple[tuple[str, Spec], ...]] = {}

    def spec(self, rel_dir: str, present: bool | None = None) -> Spec | None:
        """The rules of ``<root>/<rel_dir>/.gitignore`` (``present=False``: known to be absent)."""
        if rel_dir in self._specs:
            return self._specs[rel_dir]
        spec = None
        if present is not False:
            rel = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
            try:
                fd = self._base.child(rel).open(READ_FLAGS)  # beneath the root, no links
            except (OSError, ValueError):
                text = None
            else:
                try:
                    chunks = []
                    while chunk := os.read(fd, 1 << 16):
                        chunks.append(chunk)
                    text = b"".join(chunks).decode("utf-8", "replace")
                except OSError:
                    text = None
                finally:
                    os.close(fd)
            if text is not None:
                if text.startswith("\ufeff"):
                    text = text[1:]
                spec = _compile(text.splitlines())
        self._specs[rel_dir] = spec
        return spec

    def chain(self, rel_dir: str) -> tuple[tuple[str, Spec], ...]:
        """The ``(directory, rules)`` pairs that apply inside ``rel_dir``, shallowest first."""
        found = self._chains.get(rel_dir)
        if found is None:
            parent = rel_dir.rpartition("/")[0] if rel_dir else None
            found = self.chain(parent) if parent is not None else ()
            spec = self.spec(rel_dir)
            if spec is not None:
                found = (*found, (rel_dir, spec))
            self._chains[rel_dir] = found
        return found

    def verdict(self, rel: str, is_dir: bool) -> bool:
        """True when the rules of the entry's ancestors ignore ``rel`` itself (one component)."""
        chain = self.chain(rel.rpartition("/")[0])
        if not chain:
            return False
        suffix = "/" if is_dir else ""
        for base, spec in reversed(chain):
            sub = rel[len(base) + 1:] if base else rel
            result = _judge(spec, sub + suffix)
            if result is not None:
                return result
        return False

    def ignored_below(self, rel: str, top: str) -> bool:
        """True when any component of file ``rel`` below directory ``top`` is ignored."""
        parts = rel.split("/")
        start = len(top.split("/")) if top else 0
        for depth in range(start + 1, len(parts)):
            prefix = "/".join(parts[:depth])
            known = self._dir_verdicts.get(prefix)
            if known is None:
                known = self.verdict(prefix, True)
                self._dir_verdicts[prefix] = known
            if known:
                return True
        return self.verdict(rel, False)

    def any_between(self, top: str) -> bool:
        """True when the root or a directory above ``top`` has a ``.gitignore``."""
        parent = top.rpartition("/")[0] if top else None
        return parent is not None and bool(self.chain(parent))


__all__ = ["FileEntry", "IgnoreRules", "join_rel", "walk_files"]


class FileEntry(NamedTuple):
    """A regular file a walk found: its path relative to the tree's root, on disk, and as a
    `callgate.paths.ResolvedPath` confined beneath the walk's root (open it with ``.open()``)."""

    rel: str
    path: str
    resolved: ResolvedPath | None = None


def walk_files(root: str | ResolvedPath, top_rel: str, *, skip_hidden: bool,
               ignore: IgnoreRules | None, enter: Callable[[str, str], bool] | None = None,
               stop: Callable[[], bool] | None = None) -> Iterator[FileEntry]:
    """The regular files below ``<root>/<top_rel>``, in path order, depth first.

    - ``root``: a confined `callgate.ResolvedPath` (a directory), or a path string (held
      as named; everything below it is then confined to it).
    - ``skip_hidden``: names starting with ``.`` are left out (files and directories).
    - ``ignore``: gitignored entries are left out (rules above ``top_rel`` apply too).
    - ``enter(rel, name)``: asked for each `PRUNE` directory; the walk enters only when it
      says yes (default: never).
    - ``stop()``: checked once per directory; the walk ends early when it says yes.

    Symlinks and special files are never yielded or followed. The top is always walked.
    """
    base = root if isinstance(root, ResolvedPath) else root_path(os.fspath(root))
    try:
        top = (base.child(top_rel) if top_rel else base).opendir()
    except (OSError, ValueError):
        return
    stack: list[tuple[Iterator[tuple[str, str, str]], HeldDir]] = \
        [(_listing(top, top_rel, ignore), top)]
    try:
        while stack:
            listing, held = stack[-1]
            try:
                rel, name, kind = next(listing)
            except StopIteration:
                stack.pop()
                held.close()
                continue
            if skip_hidden and name.startswith("."):
                continue
            if kind == "dir":
                if name in PRUNE and (enter is None or not enter(rel, name)):
                    continue
                if ignore is not None and ignore.verdict(rel, True):
                    continue
                if stop is not None and stop():
                    return
                try:
                    sub = held.sub(name)
                except (OSError, PathChanged):
                    continue
                stack.append((_listing(sub, rel, ignore), sub))
                continue
            if kind != "file":
                continue
            if ignore is not None and ignore.verdict(rel, False):
                continue
            yield FileEntry(rel, os.path.join(base.path, rel), base.child(rel))
    finally:
        for _, held in stack:
            held.close()


def _listing(held: HeldDir, rel: str, ignore: IgnoreRules | None
             ) -> Iterator[tuple[str, str, str]]:
    """``(rel, name, kind)`` of each entry, in name order; kind is ``dir``, ``file`` or
    ``other`` (symlinks included), taken while the directory is held."""
    try:
        entries = held.scandir()
    except OSError:
        return iter(())
    out = []
    for e in entries:
        try:
            if e.is_symlink():
                kind = "other"
            elif e.is_dir(follow_symlinks=False):
                kind = "dir"
            elif e.is_file(follow_symlinks=False):
                kind = "file"
            else:
                kind = "other"
        except OSError:
            kind = "other"
        out.append((join_rel(rel, e.name), e.name, kind))
    if ignore is not None:
        ignore.spec(rel, any(e.name == ".gitignore" for e in entries))
    return iter(out)
