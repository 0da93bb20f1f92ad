"""The search plugin's hook implementation: the ``[search]`` table and ``grep``, ``glob``,
``ls`` (grep with the rg found at boot)."""

from __future__ import annotations

from callgate import Registry, hookimpl

from ._rg import find_rg
from .config import CONFIG_SCHEMA
from .tools.specs import GLOB_SPEC, LS_SPEC, grep_spec


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    config = registry.add_config("search", CONFIG_SCHEMA)
    rg = find_rg()
    if config["grep_engine"] == "rg" and rg is None:  # fails boot naming file, key and line
        raise registry.config_error(
            'grep_engine = "rg" but no rg binary was found next to the Python interpreter or '
            'on PATH; install the PyPI package "ripgrep" or use "auto"',
            ("search", "grep_engine"))
    # declared data: each tool's module is imported by its first call (callgate.deferred)
    registry.add(grep_spec(rg))
    registry.add(GLOB_SPEC)
    registry.add(LS_SPEC)


__all__ = ["callgate_register_tools"]
