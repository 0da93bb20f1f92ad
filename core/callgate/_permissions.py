"""Permission rules from ``[permissions]`` (host.md §6).

Rules come in three lists, ``allow``, ``ask`` and ``deny``, of the forms
``Tool`` and ``Tool(spec)``. Precedence is deny > ask > allow > fallback; the
fallback is allow for read-only tools and ``mode`` for the rest. Every
decision names the rule that made it.
"""

from __future__ import annotations

import logging
from typing import Any

from ._model import Decision

log = logging.getLogger("callgate")

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "mode": {"enum": ["allow", "ask", "deny"], "default": "allow"},
        "allow": {"type": "array", "items": {"type": "string"}, "default": []},
        "ask": {"type": "array", "items": {"type": "string"}, "default": []},
        "deny": {"type": "array", "items": {"type": "string"}, "default": []},
        "ask_without_approver": {"enum": ["deny", "allow"], "default": "deny"},
    },
}


class RuleEngine:
    """Matches a call against the configured rules (exact tool names for now)."""

    def __init__(self, config: dict[str, Any], tool_names: set[str]) -> None:
        self.mode: str = config.get("mode", "allow")
        self.ask_without_approver: str = config.get("ask_without_approver", "deny")
        self.rules = {kind: list(config.get(kind, [])) for kind in ("deny", "ask", "allow")}

    def decide(self, name: str, spec: Any, arguments: dict[str, Any],
               session: Any) -> Decision | None:
        for kind in ("deny", "ask", "allow"):
            for rule in self.rules[kind]:
                if rule == name:
                    return Decision(kind, rule)  # type: ignore[arg-type]
        return None

    def allow_rule_for(self, name: str, arguments: dict[str, Any]) -> str:
        """The rule text that would allow this call (for "ask without approver" messages)."""
        return name
