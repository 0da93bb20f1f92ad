"""The goals plugin's session-extension key, apart from the object it names: the plugin
registers it without importing the goal book or its store (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._book import GoalBook

#: ``session.extension(GOALS)``: the session's goal book
GOALS: SessionKey[GoalBook] = SessionKey("goals")
