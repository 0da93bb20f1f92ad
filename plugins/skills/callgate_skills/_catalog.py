"""Skill discovery, cached per root and refreshed when a root changes.

A root's scan is reused while its *signature* holds: the root directory's own
stat (an entry added, removed or renamed changes its mtime) and the stat of
``<child>/SKILL.md`` for every child folder (an edit in place, a SKILL.md
created in a folder that had none), or, on Linux, while the inotify watches on
the root and its folders saw nothing (`_watch`: a warm call is then one
non-blocking read of the inotify queue, no system call per folder; a SKILL.md
that is a symlink, or a watch that cannot be added, falls back to the stat
signature: one ``stat`` per root and per folder, no reads and no YAML). A rescan
re-reads only the SKILL.md files whose stat changed. Scans are shared by every
session of the process (module-level, under a lock).

A folder whose SKILL.md breaks a rule is skipped with a warning naming the file
(logged once per change, and listed in `Catalog.problems`), never an error.
Inside the workspace, a SKILL.md must resolve inside it (a symlink out of the
workspace is skipped the same way). ``assets``, ``scripts``, ``references`` and
``node_modules`` folders at a root's top level are not skills.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

import attrs

from ._roots import Root, skill_roots
from ._skill import MAX_SKILL_BYTES, Skill, SkillFormatError, parse_skill
from ._watch import WATCH, is_link

log = logging.getLogger("callgate.skills")

SKIP_DIRS = frozenset({"assets", "scripts", "references", "node_modules"})
StatKey = tuple[int, int, int] | None


def _stat_key(path: str) -> StatKey:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@attrs.frozen
class Problem:
    """A skipped SKILL.md and why."""

    path: str
    reason: str


@attrs.frozen
class RootScan:
    """What one root held at one signature."""

    root_key: StatKey
    children: tuple[tuple[str, StatKey], ...]
    skills: tuple[Skill, ...]
    problems: tuple[Problem, ...]
    generation: int | None = None  # the inotify generation it was armed at (`_watch`)


_scans: dict[tuple[str, str, bool], RootScan] = {}
#: every SKILL.md parsed, by path (and root), with the stat it was parsed at: a rescan after
#: one edit re-reads that one file
_parsed: dict[tuple[str, str, bool, str], tuple[StatKey, Skill | Problem]] = {}
_lock = threading.Lock()


def _children(path: str) -> list[str]:
    try:
        with os.scandir(path) as it:
            names = [
                e.name
                for e in it
                if not e.name.startswith(".") and e.name not in SKIP_DIRS and e.is_dir()
            ]
    except OSError:
        return []
    return sorted(names)


def _still_valid(root: Root, scan: RootScan) -> bool:
    if _stat_key(root.path) != scan.root_key:
        return False
    join = os.path.join
    return all(_stat_key(join(root.path, name, "SKILL.md")) == key for name, key in scan.children)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _load(root: Root, name: str, path: str, workspace_root: str) -> Skill:
    where = path
    if root.in_workspace:
        real = os.path.realpath(path)
        if not _within(real, os.path.realpath(workspace_root)):
            raise SkillFormatError(f"{where}: resolves outside the workspace ({real})")
    with open(path, "rb") as fh:
        data = fh.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillFormatError(f"{where}: larger than {MAX_SKILL_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError(f"{where}: not UTF-8 text") from None
    return parse_skill(
        text, folder=name, path=path, directory=os.path.dirname(path), scope=root.scope, where=where
    )


def scan_root(root: Root, workspace_root: str) -> RootScan:
    """The root's skills, from the cache while its signature holds."""
    cache_key = (root.path, workspace_root, root.in_workspace)
    with _lock:
        scan = _scans.get(cache_key)
    if scan is not None:
        if scan.generation is not None:
            if WATCH.generation(root.path) == scan.generation:
                return scan
        elif _still_valid(root, scan):
            return scan
    root_key = _stat_key(root.path)
    generation = WATCH.arm(root.path, (), complete=False) if root_key is not None else None
    children: list[tuple[str, StatKey]] = []
    skills: list[Skill] = []
    problems: list[Problem] = []
    names = _children(root.path) if root_key is not None else []
    watchable = (
        generation is not None
        and WATCH.arm(root.path, [os.path.join(root.path, n) for n in names], complete=True)
        is not None
    )
    for name in names:
        path = os.path.join(root.path, name, "SKILL.md")
        if watchable and is_link(path):
            watchable = False  # an edit of a link's target is not seen by the folder's watch
        key = _stat_key(path)
        children.append((name, key))
        if key is None:
            continue
        memo_key = (path, root.scope, root.in_workspace, workspace_root)
        with _lock:
            memo = _parsed.get(memo_key)
        if memo is not None and memo[0] == key:
            found = memo[1]
        else:
            try:
                found = _load(root, name, path, workspace_root)
            except SkillFormatError as exc:
                found = Problem(path, str(exc))
            except OSError as exc:
                found = Problem(path, f"{path}: unreadable ({exc.strerror or exc})")
            with _lock:
                _parsed[memo_key] = (key, found)
        if isinstance(found, Problem):
            problems.append(found)
        else:
            skills.append(found)
    old = {p.path: p.reason for p in scan.problems} if scan is not None else {}
    for problem in problems:
        if old.get(problem.path) != problem.reason:
            log.warning("skipping skill %s", problem.reason)
    scan = RootScan(
        root_key, tuple(children), tuple(skills), tuple(problems), generation if watchable else None
    )
    with _lock:
        _scans[cache_key] = scan
    return scan


@attrs.frozen
class Catalog:
    """Every skill one session can see (the first of a name wins) and what was skipped."""

    skills: Mapping[str, Skill]
    shadowed: tuple[Skill, ...]
    problems: tuple[Problem, ...]

    def names(self) -> list[str]:
        return sorted(self.skills)


def discover(workspace_root: str, config: Mapping[str, Any]) -> Catalog:
    """Scan (or reuse) every root of ``workspace_root``, highest priority first."""
    found: dict[str, Skill] = {}
    shadowed: list[Skill] = []
    problems: list[Problem] = []
    for root in skill_roots(workspace_root, config):
        scan = scan_root(root, workspace_root)
        problems.extend(scan.problems)
        for skill in scan.skills:
            if skill.name in found:
                shadowed.append(skill)
            else:
                found[skill.name] = skill
    return Catalog(found, tuple(shadowed), tuple(problems))


def clear_cache() -> None:
    """Forget every cached scan (tests, benchmarks)."""
    with _lock:
        _scans.clear()
        _parsed.clear()
