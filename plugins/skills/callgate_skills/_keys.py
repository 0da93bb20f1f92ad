"""The skills plugin's session-extension key, apart from the object it names: the plugin
registers it without importing the catalog (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._session import SessionSkills

#: ``session.extension(SKILLS)``: this plugin's per-session object
SKILLS: SessionKey[SessionSkills] = SessionKey("skills")
