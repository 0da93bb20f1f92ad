"""`SessionKey`: a typed name for a per-session object a plugin adds (pytest's ``StashKey``).

A plugin declares its key once, registers a factory for it at boot, and reads the
session's object through it, typed::

    GOALS = SessionKey[GoalBook]("goals")

    @hookimpl
    def callgate_register_tools(registry):
        registry.add_session_extension(GOALS, GoalBook)      # GoalBook(session), on first use

    def run(ctx, args):
        book = ctx.session.extension(GOALS)                  # a GoalBook

Keys are equal by name, so a plugin can reach another plugin's object without importing
it (declare a key of the same name; `SessionView.find_extension` answers ``None`` when the
plugin that adds it is not loaded).
"""

from __future__ import annotations

import re
from typing import Generic, TypeVar

T = TypeVar("T")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class SessionKey(Generic[T]):
    """The name of a per-session object of type ``T`` (see the module docstring): equal to,
    and hashed as, any key of the same name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"a session extension's name is a lower-case identifier, not {name!r}")
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionKey) and other.name == self.name

    def __hash__(self) -> int:
        return hash((SessionKey, self.name))

    def __repr__(self) -> str:
        return f"SessionKey({self.name!r})"


__all__ = ["SessionKey"]
