"""Permission facts the proxy needs outside the pipeline's own permission step.

``list``/``search``/``inspect`` omit ids with an exact, spec-less deny rule;
MCP targets carry a fallback for when no rule matches (capability.md §5
"Hints"); right before a connect or call the proxy re-reads the deny rules.
All of it asks the host's rule engine (``host.permissions``).
"""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec

_PROBE_SCHEMA: dict[str, Any] = {"type": "object"}


def _probe(name: str) -> ToolSpec:
    return ToolSpec(name=name, description="", schema=_PROBE_SCHEMA, execute=lambda c, a: "")


def decision(host: Any, session: Any, name: str, spec: ToolSpec | None = None) -> Any:
    """The rule engine's decision for ``name`` with no arguments, or ``None``."""
    engine = getattr(host, "permissions", None)
    if engine is None:
        return None
    try:
        return engine.decide(name, spec or _probe(name), {}, session)
    except Exception:
        return None


def exact_deny(host: Any, session: Any, name: str, spec: ToolSpec | None = None) -> str | None:
    """The rule text when a spec-less deny rule denies every call of ``name``."""
    engine = getattr(host, "permissions", None)
    by_name = getattr(engine, "denied_by_name", None)
    if callable(by_name):
        try:
            found_rule = by_name(name, spec)
        except Exception:
            return None
        return str(found_rule) if found_rule else None
    found = decision(host, session, name, spec)
    if found is not None and found.action == "deny" and found.rule == name:
        return str(found.rule)
    return None


def mode(host: Any) -> str:
    engine = getattr(host, "permissions", None)
    return str(getattr(engine, "mode", "allow"))


def mcp_fallback(host: Any, *, read_only: bool, destructive: bool, trusted: bool) -> str:
    """What an MCP tool or connect falls back to when no rule matches."""
    current = mode(host)
    if read_only:
        return "allow"
    if destructive:
        return "deny" if current == "deny" else "ask"
    if current == "ask" and trusted:
        return "allow"
    return current


def connect_allowed_without_asking(host: Any, session: Any, server: str,
                                   trusted: bool) -> bool:
    """For ``auto_start``: would a connect be allowed with no prompt?"""
    found = decision(host, session, f"mcp_connect__{server}")
    if found is not None:
        return found.action == "allow"
    return mcp_fallback(host, read_only=False, destructive=False, trusted=trusted) == "allow"
