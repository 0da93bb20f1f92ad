"""The tasks plugin's session-extension keys, apart from the objects they name: the plugin
registers them without importing the book, the runner or the fleets (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._book import SubagentBook
    from .tools.fleet import FleetBook

#: ``session.extension(SUBAGENTS)``: this session's subagent records
SUBAGENTS: SessionKey[SubagentBook] = SessionKey("subagents")
#: ``session.extension(FLEETS)``: this session's background fleets
FLEETS: SessionKey[FleetBook] = SessionKey("fleets")
