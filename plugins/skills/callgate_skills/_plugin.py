"""The skills plugin's hook implementations: config, session extensions, tools."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, hookimpl

from . import _install_skill, _read
from ._session import SessionSkills

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "default": []},
    },
}

TOOLS = (
    ToolSpec(
        name="read_skill",
        description=_read.DESCRIPTION,
        schema=_read.SCHEMA,
        execute=_read.run_read_skill,
        read_only=True,
        groups=("skills",),
    ),
    ToolSpec(
        name="install_skill",
        description=_install_skill.DESCRIPTION,
        schema=_install_skill.SCHEMA,
        execute=_install_skill.run_install_skill,
        groups=("skills",),
    ),
)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("skills", CONFIG_SCHEMA)
    registry.add_session_extension("skills", SessionSkills)
    registry.add_session_extension("skills_index", lambda session: session.skills.index)
    for spec in TOOLS:
        registry.add(spec)
