"""Capability ids: the four forms ``use_capability`` understands (capability.md §3)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import attrs
from callgate.suggest import close_names

Kind = Literal["tool", "mcp-server", "mcp-tool", "session"]
FORMS = "tool:<name>, mcp-server:<server>, mcp-tool:<server>/<tool>, session:tool_result"
TOOL_RESULT_ID = "session:tool_result"


@attrs.frozen
class CapabilityId:
    """A parsed id: its kind, and the names it carries."""

    kind: Kind
    name: str
    server: str | None = None

    @property
    def text(self) -> str:
        if self.kind == "mcp-tool":
            return f"mcp-tool:{self.server}/{self.name}"
        return f"{self.kind}:{self.name}"


def parse(text: str) -> CapabilityId | None:
    """The id, or ``None`` when ``text`` is not one of the four forms."""
    prefix, sep, rest = text.partition(":")
    if not sep or not rest:
        return None
    if prefix == "tool":
        return CapabilityId("tool", rest)
    if prefix == "mcp-server":
        return CapabilityId("mcp-server", rest)
    if prefix == "mcp-tool":
        server, slash, tool = rest.partition("/")
        if not slash or not server or not tool:
            return None
        return CapabilityId("mcp-tool", tool, server)
    if prefix == "session":
        return CapabilityId("session", rest)
    return None


def did_you_mean(word: str, candidates: Iterable[str], render: str = "{}",
                 meanings: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """``; did you mean a, b?`` with up to 3 close names (the core's one rule,
    `callgate.suggest.close_names`; ``meanings`` from `callgate.suggest.meanings_of`), or
    ``""``."""
    close = close_names(word, candidates, meanings)
    if not close:
        return ""
    return "; did you mean " + ", ".join(render.format(c) for c in close) + "?"
