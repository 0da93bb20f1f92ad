"""A third-party plugin that touches files only through the public file API: ``peek``
(``ctx.files.read_text``), ``peek_fd`` (``ResolvedPath.open``) and ``poke``
(``ctx.files.write_text``). The race and deny-list tests hold it to the built-ins' line."""

from __future__ import annotations

import os
from typing import Any

from callgate import ToolSpec, hookimpl

PATH_ONLY = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _peek_fd(ctx: Any, args: dict[str, Any]) -> str:
    fd = ctx.workspace.resolve(args["path"]).open()
    try:
        return os.read(fd, 1 << 16).decode()
    finally:
        os.close(fd)


class PublicApiTools:
    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="peek", description="read a file through ctx.files", read_only=True,
            schema=PATH_ONLY, execute=lambda ctx, args: ctx.files.read_text(args["path"])))
        registry.add(ToolSpec(
            name="peek_fd", description="read a file through ResolvedPath.open",
            read_only=True, schema=PATH_ONLY, execute=_peek_fd))
        registry.add(ToolSpec(
            name="poke", description="write a file through ctx.files",
            schema={"type": "object", "properties": {"path": {"type": "string"},
                                                     "text": {"type": "string"}},
                    "required": ["path", "text"]},
            execute=lambda ctx, args: str(ctx.files.write_text(args["path"], args["text"]))))


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    """The same tools, with this module as the plugin (``plugins=[_api_tools]``): a worker
    of a remote executor boots the host's plugin modules by name, so they run there too
    (a plugin instance cannot travel; its tools would be refused as not served)."""
    PublicApiTools().callgate_register_tools(registry)
