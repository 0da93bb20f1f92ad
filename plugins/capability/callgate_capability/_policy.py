"""Permission facts the proxy needs outside the pipeline's own permission step.

``list``/``search``/``inspect`` omit ids with an exact, spec-less deny rule;
MCP targets carry a fallback for when no rule matches (capability.md §5
"Hints"); right before a connect or call the proxy re-reads the deny rules.
All of it asks the host's rule engine (``host.permissions``).

Two promises are kept here, in one place each:

- `gate_hints`: the safety hints of an untrusted server (``trusted = false``, or
  any server an untrusted workspace config added) never relax a gate: its
  tools count as writers (plan mode blocks them, ``mode = "ask"`` asks); a
  ``destructiveHint`` still tightens.
- `connect_check`: every way to start a server (``mcp-server:<s>``, a call of
  ``mcp-tool:<s>/<t>`` while it is not connected, ``auto_start``, another plugin's
  tool such as an MCP prompt's slash command) is judged by the same connect check:
  the rules for ``mcp_connect__<s>``, else the connect fallback, and always an
  approval for a server an untrusted workspace added.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from callgate import Decision, ToolSpec

if TYPE_CHECKING:
    from ._cache import McpToolInfo
    from .config import ServerConfig

_PROBE_SCHEMA: dict[str, Any] = {"type": "object"}
COMMAND_SHOWN = 4000  # characters of a workspace server's command line an approval shows


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


def gate_hints(config: ServerConfig, info: McpToolInfo | None) -> tuple[bool, bool]:
    """``(read_only, destructive)`` as the gates judge a tool: its own annotations for a
    trusted server; for an untrusted one never read-only (a claim that only relaxes),
    destructive when it says so (a claim that only tightens)."""
    if info is None:
        return False, False
    if not config.trusted:
        return False, info.destructive
    return info.read_only, info.destructive


def _command(config: ServerConfig) -> str:
    text = shlex.join([config.command, *config.args])
    if len(text) <= COMMAND_SHOWN:
        return text
    half = COMMAND_SHOWN // 2
    return f"{text[:half]} …[{len(text) - 2 * half} characters not shown]… {text[-half:]}"


def connect_check(host: Any, session: Any, config: ServerConfig, start: str) -> Decision | None:
    """What starting ``config``'s server needs, ``start`` being what the call does ("connecting
    MCP server s starts it"): a ``deny``, an ``ask``, an ``allow`` (by a rule, or by the
    ``ask`` mode's fallback for a trusted server), or ``None`` when only the ``allow`` mode
    allows it. Also asked by other plugins whose tool starts a server
    (``session.extension(MCP_SERVERS).connect_decision``: the commands plugin's MCP prompts)."""
    server = config.name
    connect = f"mcp_connect__{server}"
    found = decision(host, session, connect)
    if found is not None and found.action == "deny":
        return Decision("deny", found.rule, f"{start}, and rule {found.rule} denies that")
    if config.from_untrusted_workspace:
        return Decision("ask", found.rule if found is not None else None,
                        f"{start}; it comes from the workspace config, which the user config "
                        f"does not trust, so it needs approval each session; it runs: "
                        f"{_command(config)}")
    if found is not None:
        return Decision("allow" if found.action == "allow" else "ask", found.rule, start)
    fallback = mcp_fallback(host, read_only=False, destructive=False, trusted=config.trusted)
    if fallback == "allow":
        return None if mode(host) == "allow" else Decision("allow", None, start)
    if fallback == "deny":
        return Decision("deny", None, f"{start}, and no [permissions] rule allows that (the "
                        f'fallback is "deny"); allow = ["{connect}"] in [permissions] would '
                        "allow it")
    return Decision("ask", None, start)


def connect_decision(host: Any, session: Any, config: ServerConfig,
                     caller: str | None = None) -> Decision | None:
    """What starting ``config``'s server needs: ``None`` (allowed without a prompt), or an
    ``ask`` or ``deny`` `Decision`. ``caller`` is the MCP tool whose call would start it."""
    server = config.name
    start = f"{caller} would start MCP server {server}" if caller else \
        f"connecting MCP server {server} starts it"
    found = connect_check(host, session, config, start)
    return None if found is None or found.action == "allow" else found


def connect_allowed_without_asking(host: Any, session: Any, config: ServerConfig) -> bool:
    """For ``auto_start``: would a connect be allowed with no prompt?"""
    return connect_decision(host, session, config) is None
