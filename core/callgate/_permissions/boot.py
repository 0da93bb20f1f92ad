"""What the rule engine reads of a booting host (`RuleEngine.from_host`), and a plugin's
answer for rule names no tool carries: typed here, below the registry and the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

#: A plugin's answer for a permission rule naming a tool no registered tool carries:
#: ``False`` (not one of mine), ``True`` (mine, fine) or a warning about it.
RuleNames = Callable[[str], "bool | str"]


class BootingHost(Protocol):
    """A host at the end of boot, as `RuleEngine.from_host` reads it: its config and the
    registry plugins filled (tools, the other OS's tools, rule names)."""

    @property
    def config_source(self) -> Any:
        """The host's `LayeredSource` (the engine reads only ``locate``, as of a single
        `ConfigSource`: where a rule's line is)."""
        ...

    @property
    def registry(self) -> Any: ...

    def config(self, table: str) -> dict[str, Any]: ...


__all__ = ["BootingHost", "RuleNames"]
