"""The search plugin's hook implementation: the ``[search]`` table and ``grep``, ``glob``,
``ls`` (grep with the rg found at boot)."""

from __future__ import annotations

from callgate import Registry, hookimpl

from ._engine_rg import find_rg
from .config import CONFIG_SCHEMA
from .tools import glob, grep, ls


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    config = registry.add_config("search", CONFIG_SCHEMA)
    rg = find_rg()
    if config["grep_engine"] == "rg" and rg is None:  # fails boot naming file, key and line
        raise registry.config_error(
            'grep_engine = "rg" but no rg binary was found next to the Python interpreter or '
            'on PATH; install the PyPI package "ripgrep" or use "auto"',
            ("search", "grep_engine"))
    registry.add(grep.spec(rg))
    registry.add(glob.SPEC)
    registry.add(ls.SPEC)


__all__ = ["callgate_register_tools"]
