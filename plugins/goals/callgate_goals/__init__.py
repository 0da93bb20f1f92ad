"""callgate's goal tools: ``create_goal``, ``get_goal``, ``update_goal``.

A goal is long-running work the host keeps for the model: an id and a revision
the model must quote exactly, a phase (active, paused, blocked, complete), and
automatic rounds the integrator drives while the goal is armed. Only a direct
human turn may create a goal or use every action; an automatic round may only
complete or block its own goal. State lives in the session store (a session
directory's old ``goals.json`` is imported once), and a resumed session restores the
goal disarmed.

The integrator declares each turn and drives the rounds::

    session.begin_turn("human")              # then run the model on the user's message
    while session.extension(GOALS).should_continue():
        r = session.extension(GOALS).start_round()      # an automatic turn bound to the goal
        run_model(r.prompt)

``session.begin_turn("automatic")`` does the same as ``start_round()`` (through
``callgate_turn_start``) and leaves the round in ``session.extension(GOALS).round``.

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] goals = "callgate_goals"``.
"""

from typing import TYPE_CHECKING, Any

from ._keys import GOALS
from .plugin import callgate_register_tools, callgate_shape_result, callgate_turn_start

if TYPE_CHECKING:
    from ._book import GoalBook, GoalRound, Outcome
    from ._goal import Goal

#: imported on first use: the book and its store are no part of registering (issue 38)
_LAZY = {"GoalBook": "_book", "GoalRound": "_book", "Outcome": "_book", "Goal": "_goal"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = [
    "GOALS",
    "Goal",
    "GoalBook",
    "GoalRound",
    "Outcome",
    "callgate_register_tools",
    "callgate_shape_result",
    "callgate_turn_start",
]
