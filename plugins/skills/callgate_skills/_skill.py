"""One skill: ``<name>/SKILL.md`` parsed into its front matter and body, checked.

The rules (agentskills.io, as Claude Code and Codex read them):

- ``name``: 1-64 characters of ``[a-z0-9-]``, and the same as the folder;
- ``description``: required, at most 1024 characters;
- optional ``allowed-tools`` (a list, or a string split on commas and spaces),
  ``read-only`` (a boolean), ``run-as`` (``inline`` | ``subagent``; Claude Code's
  ``context: fork`` means ``subagent``), ``argument-hint`` (a string);
- every other key is kept as given (``extra``), never an error.

A file that breaks a rule raises `SkillFormatError` with the reason; discovery
skips it with a warning naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

NAME_PATTERN = r"^[a-z0-9-]{1,64}$"
NAME_RULE = re.compile(NAME_PATTERN)
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024
RUN_AS = ("inline", "subagent")
KNOWN = frozenset({"name", "description", "allowed-tools", "read-only", "run-as", "argument-hint"})


class SkillFormatError(ValueError):
    """A SKILL.md that breaks a rule; the message says which."""


@attrs.frozen(kw_only=True)
class Skill:
    """A discovered skill. ``path`` is its SKILL.md, ``directory`` its folder, ``scope``
    the root it came from (``project`` | ``custom`` | ``user`` | ``claude-user``)."""

    name: str
    description: str
    body: str
    path: str
    directory: str
    scope: str
    run_as: str = "inline"
    allowed_tools: tuple[str, ...] | None = None
    read_only: bool = False
    argument_hint: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def is_subagent(self) -> bool:
        return self.run_as == "subagent"

    def has_scripts(self) -> bool:
        """Whether the folder holds a ``scripts/`` directory (code the model might run)."""
        import os

        return os.path.isdir(os.path.join(self.directory, "scripts"))


def _tools(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = [p for p in re.split(r"[,\s]+", value) if p]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value if v.strip()]
    else:
        raise SkillFormatError(
            f"{where}: allowed-tools must be a list of tool names or a comma-separated string"
        )
    return tuple(items)


_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it


def parse_front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a Markdown file that starts with ``---`` YAML (safe
    loading only: no tags that build objects)."""
    import yaml

    text = text.lstrip("\ufeff")
    match = _FRONT.match(text)
    if match is None:
        raise SkillFormatError(
            f"{where}: no YAML front matter (the file must start with a "
            "--- line and close it with another)"
        )
    try:
        meta = yaml.load(match.group(1), Loader=_yaml_loader()) if match.group(1).strip() else {}
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkillFormatError(f"{where}: the front matter is not valid YAML ({first})") from None
    if not isinstance(meta, dict):
        raise SkillFormatError(f"{where}: the front matter is not a mapping of keys")
    return dict(meta), text[match.end() :].lstrip("\r\n")


def parse_skill(
    text: str, *, folder: str, path: str, directory: str, scope: str, where: str
) -> Skill:
    """The `Skill` a SKILL.md's text describes, or `SkillFormatError`."""
    meta, body = parse_front_matter(text, where)
    name = meta.get("name")
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise SkillFormatError(
            f"{where}: name must be 1-64 characters of a-z, 0-9 and -, got {name!r}"
        )
    if name != folder:
        raise SkillFormatError(f"{where}: name {name!r} does not match its folder {folder!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError(f"{where}: description is required")
    if len(description) > MAX_DESCRIPTION:
        raise SkillFormatError(
            f"{where}: description is {len(description)} characters; at most {MAX_DESCRIPTION}"
        )
    run_as = meta.get("run-as")
    if run_as is None and meta.get("context") == "fork":
        run_as = "subagent"
    run_as = run_as or "inline"
    if run_as not in RUN_AS:
        raise SkillFormatError(f"{where}: run-as must be inline or subagent, got {run_as!r}")
    read_only = meta.get("read-only", False)
    if not isinstance(read_only, bool):
        raise SkillFormatError(f"{where}: read-only must be true or false")
    hint = meta.get("argument-hint")
    if hint is not None and not isinstance(hint, str | list):
        raise SkillFormatError(f"{where}: argument-hint must be a string")
    if isinstance(hint, list):
        hint = " ".join(str(h) for h in hint)
    extra = {k: v for k, v in meta.items() if k not in KNOWN}
    return Skill(
        name=name,
        description=description.strip(),
        body=body,
        path=path,
        directory=directory,
        scope=scope,
        run_as=run_as,
        allowed_tools=_tools(meta.get("allowed-tools"), where),
        read_only=read_only,
        argument_hint=hint,
        extra=extra,
    )


def render_skill_file(
    name: str,
    description: str,
    body: str,
    *,
    run_as: str = "inline",
    allowed_tools: list[str] | None = None,
    read_only: bool | None = None,
) -> str:
    """The text of a new SKILL.md (YAML front matter, then the body)."""
    import yaml

    meta: dict[str, Any] = {"name": name, "description": description}
    if run_as != "inline":
        meta["run-as"] = run_as
    if allowed_tools:
        meta["allowed-tools"] = list(allowed_tools)
    if read_only is not None:
        meta["read-only"] = read_only
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n\n{body.rstrip()}\n"
