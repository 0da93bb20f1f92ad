"""A fleet's preflight: ids, the dependency graph and the write claims, checked before any
child starts.

Every problem is a `Violation` (so the call is ``invalid_arguments`` and nothing runs):
duplicate ids, a ``depends_on`` naming no item, a dependency cycle (named as the path
that closes it), a write path outside the workspace, and two writers whose claims
overlap while they could run at the same time. A writer (``read_only`` false) without
``write_paths`` claims the whole workspace. Two claims overlap when one path is the
other or lies below it (canonical paths: a symlink does not hide an overlap). Writers
ordered by the graph (one depends on the other, directly or not) never run together,
so their claims may overlap.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from callgate import ToolError, Violation


@attrs.frozen(kw_only=True)
class Item:
    """One fleet task as the scheduler sees it."""

    index: int
    id: str
    description: str
    prompt: str
    profile: str | None
    read_only: bool
    tools: tuple[str, ...] | None
    max_steps: int | None
    depends_on: tuple[str, ...]
    #: canonical claimed paths; the workspace root when a writer names none; () if read-only
    claims: tuple[str, ...]
    shown_claims: tuple[str, ...]


def item_id(task: Mapping[str, Any], index: int) -> str:
    return task.get("id") or f"task-{index + 1}"


def _claims(
    task: Mapping[str, Any], index: int, workspace: Any, found: list[Violation]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if task.get("read_only", False):
        return (), ()
    paths = task.get("write_paths") or []
    if not paths:
        return (workspace.root,), (".",)
    claims, shown = [], []
    for j, path in enumerate(paths):
        try:
            resolved = workspace.resolve(path, write=True)
        except ToolError:
            found.append(
                Violation(
                    f"/tasks/{index}/write_paths/{j}", "workspace", "a path inside the workspace"
                )
            )
            continue
        claims.append(resolved.path)
        shown.append(resolved.display)
    return tuple(claims), tuple(shown)


def _profiled(task: Mapping[str, Any], index: int, found: list[Violation]) -> dict[str, Any]:
    """A task naming a built-in profile: a strict reader with the profile's own tools."""
    name = task["profile"]
    if task.get("read_only") is False or task.get("write_paths"):
        found.append(
            Violation(
                f"/tasks/{index}/profile",
                "read_only",
                f"no write_paths and no read_only false: profile {name!r} is strictly read-only",
            )
        )
    if task.get("tools") is not None:
        found.append(
            Violation(
                f"/tasks/{index}/tools",
                "profile",
                f"no tools beside a profile ({name!r} brings its own)",
            )
        )
    return {**task, "read_only": True}


def _overlap(a: str, b: str) -> bool:
    return (
        a == b or a.startswith(b.rstrip(os.sep) + os.sep) or b.startswith(a.rstrip(os.sep) + os.sep)
    )


def _cycle(ids: Sequence[str], deps: Mapping[str, Sequence[str]]) -> list[str] | None:
    """A dependency cycle as the ids along it (first id repeated at the end), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in deps.get(node, ()):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in ids:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _ancestors(ids: Sequence[str], deps: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """Every item's transitive dependencies (the graph is acyclic here)."""
    memo: dict[str, set[str]] = {}

    def of(node: str) -> set[str]:
        if node not in memo:
            memo[node] = set()
            for dep in deps.get(node, ()):
                memo[node] |= {dep} | of(dep)
        return memo[node]

    for node in ids:
        of(node)
    return memo


def plan(tasks: Sequence[Mapping[str, Any]], workspace: Any) -> tuple[list[Item], list[Violation]]:
    """The items of a fleet call and everything that refuses it (empty: it may start)."""
    found: list[Violation] = []
    ids = [item_id(t, i) for i, t in enumerate(tasks)]
    first: dict[str, int] = {}
    for i, name in enumerate(ids):
        if name in first:
            found.append(
                Violation(
                    f"/tasks/{i}/id",
                    "unique",
                    f"an id no other task uses (task {first[name]} is already {name!r})",
                )
            )
        else:
            first[name] = i
    deps: dict[str, tuple[str, ...]] = {}
    for i, (name, task) in enumerate(zip(ids, tasks, strict=True)):
        wanted = tuple(dict.fromkeys(task.get("depends_on") or []))
        for j, dep in enumerate(wanted):
            if dep not in first:
                found.append(
                    Violation(
                        f"/tasks/{i}/depends_on/{j}",
                        "known_id",
                        f"the id of a task of this fleet ({dep!r} is none)",
                    )
                )
        deps[name] = tuple(d for d in wanted if d in first)
    if found:
        return [], found
    cycle = _cycle(ids, deps)
    if cycle:
        where = first[cycle[0]]
        return [], [
            Violation(
                f"/tasks/{where}/depends_on",
                "acyclic",
                "dependencies without a cycle (" + " -> ".join(cycle) + ")",
            )
        ]
    items = []
    for i, (name, task) in enumerate(zip(ids, tasks, strict=True)):
        if task.get("profile"):
            task = _profiled(task, i, found)
        claims, shown = _claims(task, i, workspace, found)
        tools = task.get("tools")
        items.append(
            Item(
                index=i,
                id=name,
                description=task.get("description") or name,
                prompt=task["prompt"],
                profile=task.get("profile"),
                read_only=bool(task.get("read_only", False)),
                tools=tuple(tools) if tools is not None else None,
                max_steps=task.get("max_steps"),
                depends_on=deps[name],
                claims=claims,
                shown_claims=shown,
            )
        )
    if found:
        return [], found
    ancestors = _ancestors(ids, deps)
    writers = [it for it in items if it.claims]
    for k, a in enumerate(writers):
        for b in writers[:k]:
            if a.id in ancestors[b.id] or b.id in ancestors[a.id]:
                continue  # ordered by the graph: never at the same time
            for ca, sa in zip(a.claims, a.shown_claims, strict=True):
                hit = next(
                    (
                        sb
                        for cb, sb in zip(b.claims, b.shown_claims, strict=True)
                        if _overlap(ca, cb)
                    ),
                    None,
                )
                if hit is not None:
                    found.append(
                        Violation(
                            f"/tasks/{a.index}/write_paths",
                            "disjoint_claims",
                            f"write claims that do not overlap those of {b.id!r} (both may run at "
                            f"once: {a.id!r} claims {sa!r}, {b.id!r} claims {hit!r}); give each "
                            "writer its own write_paths, mark readers read_only, or order them "
                            "with depends_on",
                        )
                    )
                    break
    return (items, []) if not found else ([], found)
