"""Permission names of MCP capabilities (capability.md §5 "Names").

A rule names an MCP tool as ``mcp__<server>__<norm(tool)>`` and a server start
as ``mcp_connect__<server>``. ``norm`` keeps names rule-safe and tells apart raw
names that would otherwise collapse onto the same text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]+")
SERVER_NAME = re.compile(r"^(?!.*__)[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9-])?$")


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits: a tiny stable hash for name suffixes."""
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def norm(raw: str) -> str:
    """A rule-safe form of an MCP tool name.

    Runs of characters outside ``[A-Za-z0-9_-]`` become ``_``, ``_`` is trimmed at
    both ends (``unnamed`` if nothing is left); a changed name gets ``_`` plus the
    first 6 hex digits of FNV-1a-32 of the raw UTF-8 bytes, so ``files.read`` and
    ``files_read`` stay distinct.
    """
    cleaned = _OUTSIDE.sub("_", raw).strip("_") or "unnamed"
    if cleaned == raw:
        return raw
    return f"{cleaned}_{fnv1a_32(raw.encode('utf-8', 'surrogatepass')):08x}"[: len(cleaned) + 7]


def tool_permission_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{norm(tool)}"


def connect_permission_name(server: str) -> str:
    return f"mcp_connect__{server}"


def server_of_connect_name(name: str) -> str | None:
    """The server of an ``mcp_connect__<s>`` name."""
    prefix = "mcp_connect__"
    server = name[len(prefix):] if name.startswith(prefix) else ""
    return server if SERVER_NAME.match(server) else None


def rule_name_check(configured: Iterable[str]) -> Callable[[str], bool | str]:
    """What the permission rules hear about an MCP name (``registry.add_rule_names``): a
    name of a configured server is fine; one of another server warns (it can match nothing).
    """
    servers = set(configured)

    def check(name: str) -> bool | str:
        server = server_of_permission_name(name) or server_of_connect_name(name)
        if server is None:
            return False
        if server in servers:
            return True
        if servers:
            return f"names MCP server {server!r}, which is not configured in [mcp_servers]"
        return f"names MCP server {server!r}, but no [mcp_servers] are configured"

    return check


def server_of_permission_name(name: str) -> str | None:
    """The server of an ``mcp__<s>__<t>`` name (server names never contain ``__``)."""
    if not name.startswith("mcp__"):
        return None
    server, sep, _tool = name[5:].partition("__")
    return server if sep and server else None
