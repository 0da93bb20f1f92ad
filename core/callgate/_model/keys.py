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

from typing import Generic, TypeVar

import attrs

T = TypeVar("T")


@attrs.frozen
class SessionKey(Generic[T]):
    """The name of a per-session object of type ``T`` (see the module docstring)."""

    name: str = attrs.field(validator=attrs.validators.matches_re(r"^[a-z][a-z0-9_]*$"))


__all__ = ["SessionKey"]
