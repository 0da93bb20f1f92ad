"""``read_skill``: an inline skill's instructions, with its folder, for the model to follow."""

from __future__ import annotations

import re
from typing import Any

from callgate import ToolContext, ToolSpec

from .._session import SKILLS, skill_error

NAME_ARG = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "The skill's name, as in the skills index.",
}
ARGUMENTS_ARG = {
    "type": "string",
    "maxLength": 20000,
    "description": "What the skill should work on; fills $ARGUMENTS and $1..$9.",
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {"name": NAME_ARG, "arguments": ARGUMENTS_ARG},
}

DESCRIPTION = (
    "Read an inline skill: its instructions (arguments filled in) and its folder, whose "
    "scripts/ and references/ you can read with read_file. A subagent skill is run with "
    "run_skill instead."
)

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


SPEC = ToolSpec(
    name="read_skill",
    description=DESCRIPTION,
    schema=SCHEMA,
    execute=run_read_skill,
    read_only=True,
    groups=("skills",),
)
