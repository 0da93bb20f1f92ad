"""callgate's skill tools: Agent Skills folders (``<name>/SKILL.md``) where they already are.

Skills are found in ``.callgate/skills``, ``.agents/skills`` and ``.claude/skills`` of the
workspace, ``[skills] paths``, ``<state>/skills`` and ``~/.claude/skills`` (highest priority
first; see `callgate_skills._roots`). Tools (all hidden by default): ``read_skill``,
``install_skill``, ``install_source``.

For integrators, ``session.extension(SKILLS).index()`` returns ``[{"name", "description"}]`` for the
system prompt; ``session.extension(SKILLS)`` is the `SessionSkills` behind it.

Entry point: ``[project.entry-points.callgate] skills = "callgate_skills"``.
"""

from typing import TYPE_CHECKING, Any

from callgate_toolkit.placeholders import substitute_arguments as substitute

from ._keys import SKILLS
from ._roots import skill_roots, user_skills_dir
from ._skill import Skill, SkillFormatError
from .plugin import callgate_check_permission, callgate_register_tools

if TYPE_CHECKING:
    from ._catalog import Catalog, Problem, clear_cache, discover
    from ._session import SessionSkills

#: imported on first use: the catalog is no part of registering (issue 38)
_LAZY = {"Catalog": "_catalog", "Problem": "_catalog", "clear_cache": "_catalog",
         "discover": "_catalog", "SessionSkills": "_session"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)

__all__ = [
    "SKILLS",
    "Catalog",
    "Problem",
    "SessionSkills",
    "Skill",
    "SkillFormatError",
    "callgate_check_permission",
    "callgate_register_tools",
    "clear_cache",
    "discover",
    "skill_roots",
    "substitute",
    "user_skills_dir",
]
