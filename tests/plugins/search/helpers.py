"""Shared helpers for the search and code plugin tests."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from callgate import Host, ToolResult, ToolSpec, hookimpl


class _Reader:
    """A minimal ``read_file`` built on the core's observed-read API (``ctx.files``), used
    only while the files plugin does not register its own ``read_file`` yet."""

    __name__ = "observed_reader"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        def run(ctx: Any, args: dict[str, Any]) -> ToolResult:
            text = ctx.files.read_text(args["path"])
            return ToolResult.ok(text)

        registry.add(ToolSpec(
            name="read_file", description="Read a file (test stand-in).", read_only=True,
            schema={"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"], "additionalProperties": True},
            execute=run))


@functools.cache
def _files_has_read_file() -> bool:
    try:
        files = importlib.import_module("callgate_files")
        host = Host.boot({}, plugins=[files], entrypoints=False, surface="full")
    except Exception:
        return False
    return "read_file" in host.registry.names()


def reader_plugin() -> Any:
    """The files plugin when it registers ``read_file``, else the stand-in above."""
    if _files_has_read_file():
        return importlib.import_module("callgate_files")
    return _Reader()


def lines(result: ToolResult) -> list[str]:
    return result.text.split("\n")
