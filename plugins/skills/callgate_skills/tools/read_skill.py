"""``read_skill``: an inline skill's instructions, with its folder, for the model to follow."""

from __future__ import annotations

import re
from typing import Any

from callgate import ToolContext

from .._keys import SKILLS
from .._session import skill_error

_TAG = re.compile(r"\s*\[[^\]]*\]\s*")


def skill_name(raw: str) -> str:
    """The name the model meant: ``/x``, ``x [subagent]`` and spaces read as ``x``."""
    return _TAG.sub("", raw).strip().lstrip("/").strip()


def run_read_skill(ctx: ToolContext, args: dict[str, Any]) -> str:
    skills = ctx.session.extension(SKILLS)
    skill = skills.find(skill_name(args["name"]))
    if skill.is_subagent:
        raise skill_error(
            "SUBAGENT",
            f"{skill.name} is a subagent skill: run it with run_skill (or read_only_skill)",
            "invalid_arguments",
        )
    return skills.render(skill, args.get("arguments", "") or "")
