"""The media plugin's hook implementation: its hook spec, the ``[media]`` table and
``view_image``."""

from __future__ import annotations

from callgate import Registry, hookimpl

from . import hookspecs
from .config import CONFIG_SCHEMA
from .tools.specs import spec


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    registry.add_hookspecs(hookspecs)
    config = registry.add_config("media", CONFIG_SCHEMA)
    registry.add(spec(config["vision"]))
