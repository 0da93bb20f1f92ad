"""The web plugin: `WebPlugin` registers ``web_fetch`` and the ``[web]`` table.

The entry point registers `default_plugin` (the system resolver, a real transport);
tests and integrators register their own ``WebPlugin(resolver=..., transport=...)``.
"""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .config import CONFIG_SCHEMA
from .tools.web_fetch import WebFetch


class WebPlugin(WebFetch):
    """The ``web`` plugin: ``web_fetch`` (`WebFetch`) and the ``[web]`` config table."""

    name = "web"

    @hookimpl
    def callgate_register_tools(self, registry: Any, host: Any) -> None:
        registry.add_config("web", CONFIG_SCHEMA)
        registry.add(self.spec())


#: The instance the entry point registers (pluggy calls its hook through this module).
default_plugin = WebPlugin()
callgate_register_tools = default_plugin.callgate_register_tools
