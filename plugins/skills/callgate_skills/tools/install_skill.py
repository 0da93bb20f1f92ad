"""``install_skill``: write a new ``<name>/SKILL.md``, atomically and never over anything.

Project skills go to ``<workspace>/.agents/skills`` through ``ctx.files`` (confined,
protected paths refused, create-only); user skills to ``<state>/skills`` with the
same create-only publish. A name is refused when a skill, a slash command or an
MCP prompt already answers to it (the commands plugin, when loaded, provides
the commands plugin's ``command_names`` session extension).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from callgate import SessionKey, ToolContext, ToolError
from callgate.files import create_file

from .._keys import SKILLS
from .._roots import PROJECT_INSTALL_DIR, install_dir
from .._session import skill_error
from .._skill import MAX_SKILL_BYTES, render_skill_file

#: the commands plugin's names, when it is loaded (a key of the same name)
COMMAND_NAMES: SessionKey[Callable[[], Any]] = SessionKey("command_names")

def taken_names(session: Any) -> set[str]:
    """Names already answered to: every skill (shadowed too), command and MCP prompt."""
    catalog = session.extension(SKILLS).catalog()
    names = set(catalog.skills) | {s.name for s in catalog.shadowed}
    commands = session.find_extension(COMMAND_NAMES)
    if callable(commands):
        for name in commands():
            names.add(name)
            if name.startswith("mcp:"):
                names.add(name.rsplit(":", 1)[-1])
    return names


def run_install_skill(ctx: ToolContext, args: dict[str, Any]) -> str:
    name = args["name"]
    scope = args.get("scope", "project")
    if name in taken_names(ctx.session):
        raise skill_error(
            "NAME_TAKEN",
            f"{name!r} is already a skill, slash command or MCP "
            "prompt; choose another name (nothing was written)",
            "invalid_arguments",
        )
    text = render_skill_file(
        name,
        args["description"],
        args["body"],
        run_as=args.get("run_as", "inline"),
        allowed_tools=args.get("allowed_tools"),
        read_only=args.get("read_only"),
    )
    data = text.encode("utf-8")
    if len(data) > MAX_SKILL_BYTES:
        raise skill_error(
            "TOO_LARGE",
            f"the skill is {len(data)} bytes; at most {MAX_SKILL_BYTES}",
            "invalid_arguments",
        )
    root = install_dir(scope, ctx.workspace.root)
    folder = os.path.join(root, name)
    if os.path.lexists(folder):
        raise skill_error(
            "EXISTS", f"{folder} already exists; nothing was written", "already_exists"
        )
    if scope == "project":
        rp = ctx.workspace.resolve(os.path.join(PROJECT_INSTALL_DIR, name, "SKILL.md"), write=True)
        ctx.files.create(rp, data, text=text)
        path = rp.path
    else:
        path = os.path.join(folder, "SKILL.md")
        try:
            create_file(path, data)
        except FileExistsError:
            raise skill_error(
                "EXISTS", f"{path} was created meanwhile; nothing was written", "already_exists"
            ) from None
        except OSError as exc:
            raise ToolError(
                "io_error", f"could not write {path}: {exc.strerror or exc}", "FS_IO_ERROR"
            ) from None
    return json.dumps(
        {
            "ok": True,
            "name": name,
            "scope": scope,
            "path": ctx.session.extension(SKILLS).display(path),
            "runAs": args.get("run_as", "inline"),
            "note": "read it with read_skill"
            if args.get("run_as", "inline") == "inline"
            else "run it with run_skill",
        }
    )
