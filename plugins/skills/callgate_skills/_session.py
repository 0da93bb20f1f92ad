"""`SessionSkills` (``session.extension(SKILLS)``): the skills one session sees, and how they read.

``session.extension(SKILLS).index()`` (for integrators) is `SessionSkills.index`: names and
descriptions only, for the system prompt; the model reads a body with
``read_skill`` when it needs it (progressive disclosure).
"""

from __future__ import annotations

import os
from typing import Any

from callgate import ToolError
from callgate_toolkit.placeholders import has_placeholders, substitute_arguments

from ._catalog import Catalog, discover
from ._skill import Skill


def skill_error(code: str, message: str, kind: str = "tool_error") -> ToolError:
    return ToolError(kind, f"SKILL_{code}: {message}", f"SKILL_{code}")



class SessionSkills:
    """Discovery for one session (the scans themselves are cached process-wide)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._root = session.workspace.root
        self._config = session.host.config("skills") or {}

    @property
    def workspace_root(self) -> str:
        return self._root

    def catalog(self) -> Catalog:
        return discover(self._root, self._config)

    def index(self) -> list[dict[str, str]]:
        """``[{"name", "description"}]`` of every skill, sorted by name."""
        catalog = self.catalog()
        return [
            {"name": s.name, "description": s.description}
            for s in sorted(catalog.skills.values(), key=lambda s: s.name)
        ]

    def find(self, name: str) -> Skill:
        """The skill ``name``, or a ``not_found`` error listing the names there are."""
        catalog = self.catalog()
        skill = catalog.skills.get(name.strip())
        if skill is not None:
            return skill
        names = ", ".join(catalog.names()) or "none"
        skipped = "".join(f"\n- skipped {p.reason}" for p in catalog.problems[:10])
        raise skill_error(
            "NOT_FOUND", f"no skill named {name!r}; skills here: {names}{skipped}", "not_found"
        )

    def display(self, path: str) -> str:
        """``path`` relative to the workspace when inside it, else absolute."""
        root = self._root.rstrip(os.sep) + os.sep
        return path[len(root) :] if path.startswith(root) else path

    def render(self, skill: Skill, arguments: str) -> str:
        """An inline skill as the model reads it: header, folder, body, arguments."""
        body = skill.body.strip()
        if arguments and has_placeholders(body):
            body = substitute_arguments(body, arguments)
        elif has_placeholders(body):
            body = substitute_arguments(body, "")
        lines = [
            f"# Skill: {skill.name}",
            f"> {skill.description}",
            f"({skill.scope} · {self.display(skill.path)})",
            f"Skill folder: {self.display(skill.directory)} (read its scripts/ and "
            "references/ with read_file when the instructions point to them)",
            "",
            body,
        ]
        if arguments and not has_placeholders(skill.body):
            lines += ["", f"Arguments: {arguments}"]
        return "\n".join(lines)
