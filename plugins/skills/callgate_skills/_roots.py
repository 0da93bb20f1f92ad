"""Where skills are found, highest priority first (a name found twice: the first wins).

1. ``<workspace>/.callgate/skills``  (scope ``project``)
2. ``<workspace>/.agents/skills``    (``project``; Codex and the Agent Skills convention)
3. ``<workspace>/.claude/skills``    (``project``; Claude Code)
4. ``[skills] paths``                (``custom``; relative to the workspace, ``~`` expanded)
5. ``<state>/skills``                (``user``; `callgate.paths.state_dir()`, so ``$CALLGATE_HOME``)
6. ``~/.claude/skills``              (``claude-user``)

``install_skill`` writes project skills into ``.agents/skills`` (``.callgate/`` is a
protected path no tool may write) and user skills into ``<state>/skills``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs
from callgate.paths import state_dir

PROJECT_DIRS = (".callgate/skills", ".agents/skills", ".claude/skills")
PROJECT_INSTALL_DIR = ".agents/skills"


@attrs.frozen
class Root:
    """One skills root: its absolute path, scope, and whether it is inside the workspace
    (a skill there must resolve inside the workspace, symlinks included)."""

    path: str
    scope: str
    in_workspace: bool


def user_skills_dir() -> str:
    return os.path.join(state_dir(), "skills")


def claude_user_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".claude", "skills")


def skill_roots(workspace_root: str, config: Mapping[str, Any]) -> list[Root]:
    """Every root, highest priority first, duplicates dropped."""
    roots = [Root(os.path.join(workspace_root, d), "project", True) for d in PROJECT_DIRS]
    for entry in config.get("paths", ()) or ():
        path = os.path.abspath(os.path.join(workspace_root, os.path.expanduser(entry)))
        inside = path == workspace_root or path.startswith(workspace_root.rstrip(os.sep) + os.sep)
        roots.append(Root(path, "custom", inside))
    roots.append(Root(user_skills_dir(), "user", False))
    roots.append(Root(claude_user_dir(), "claude-user", False))
    seen: set[str] = set()
    unique = []
    for root in roots:
        key = os.path.normcase(os.path.normpath(root.path))
        if key not in seen:
            seen.add(key)
            unique.append(root)
    return unique


def install_dir(scope: str, workspace_root: str) -> str:
    """The root ``install_skill``/``install_source`` write a ``scope`` skill into."""
    if scope == "user":
        return user_skills_dir()
    return os.path.join(workspace_root, PROJECT_INSTALL_DIR)
