"""`ChildProfile`: what a subagent's session may run (the value; `profiles` enforces it)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any, Literal

import attrs

McpPolicy = Literal["any", "read_only", "not_destructive"]
MCP_POLICIES = ("any", "read_only", "not_destructive")


def _names(value: Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError("tools must be a list of names or globs, not one string")
    return tuple(value)


def _check_depth(_: Any, __: Any, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not 1 <= value <= 16):
        raise ValueError("max_depth must be an integer from 1 to 16")


def _check_mcp(_: Any, __: Any, value: str) -> None:
    if value not in MCP_POLICIES:
        raise ValueError(f"mcp must be one of {', '.join(MCP_POLICIES)}")


@attrs.frozen(kw_only=True)
class ChildProfile:
    """What a child session may run (``session.open_child(profile=...)``).

    - ``name`` labels the child in refusals and execution facts (``explore``,
      ``read_only_task``, ...).
    - ``tools``: the tool names (``fnmatch`` globs allowed) the child may call, directly
      or through a proxy's ``tool:<name>``; ``None``: every tool its parent may call.
      Listed tools are on the child's surface even when the host's surface hides them.
    - ``denied``: names or globs the child never runs (checked after ``tools``).
    - ``read_only``: strict read-only (see the module docstring); forces ``mcp`` to
      ``"read_only"``.
    - ``mcp``: capabilities the host does not register itself (MCP tools behind
      ``use_capability``): ``"any"``, ``"read_only"`` (``readOnlyHint`` and not
      destructive) or ``"not_destructive"`` (never ``destructiveHint``; in plan mode these
      may run although they are not read-only: the planner's rule).
    - ``max_depth``: how many levels of children may exist below the root session
      (``None``: the parent's limit, else `DEFAULT_MAX_DEPTH`).
    """

    name: str = "child"
    tools: tuple[str, ...] | None = attrs.field(default=None, converter=_names)
    denied: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    read_only: bool = False
    mcp: McpPolicy = attrs.field(default="any", validator=_check_mcp)
    max_depth: int | None = attrs.field(default=None, validator=_check_depth)

    @property
    def mcp_policy(self) -> McpPolicy:
        return "read_only" if self.read_only else self.mcp

    def allows_name(self, name: str, strict_denials: Iterable[str] = ()) -> bool:
        """Whether ``name`` passes this profile's allowlist and denials (flags aside);
        ``strict_denials``: what a strict read-only profile denies besides
        (`Registry.read_only_child_denials`)."""
        if self.tools is not None and not _matches(name, self.tools):
            return False
        if _matches(name, self.denied):
            return False
        return not (self.read_only and _matches(name, strict_denials))


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)


__all__ = ["MCP_POLICIES", "ChildProfile", "McpPolicy"]
