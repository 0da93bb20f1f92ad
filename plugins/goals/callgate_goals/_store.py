"""The session's goal in the session store (``session.storage``, namespace ``goals``):
``{"version": 1, "goal": snapshot}``, committed after every change.

A session directory from before the store may hold ``goals.json`` in the same
shape: it is imported once, when the store has no goal state for the session yet
(the file itself is left as it was). A value this version cannot read, stored or
in the file, is reported and never replaced: the book refuses changes instead (a
corrupt goal must not be silently replaced by a new one).
"""

from __future__ import annotations

import json
import os
from typing import Any

import attrs

from ._goal import Goal, MalformedGoal

VERSION = 1
NAMESPACE, KEY = "goals", "goal"
LEGACY_FILE = "goals.json"


@attrs.frozen
class Loaded:
    """What the session held: a goal (or none), or why it cannot be read."""

    goal: Goal | None = None
    unreadable: str | None = None


def _parse(data: Any, where: str) -> Loaded:
    if not isinstance(data, dict) or "version" not in data:
        return Loaded(unreadable=f"{where} has no version")
    if data["version"] != VERSION:
        return Loaded(unreadable=f"{where} has version {data['version']!r}; this host "
                      f"reads version {VERSION}")
    if data.get("goal") is None:
        return Loaded()
    try:
        return Loaded(goal=Goal.from_snapshot(data["goal"]))
    except MalformedGoal as exc:
        return Loaded(unreadable=f"{where} holds a malformed goal ({exc})")


def _legacy(directory: str | None) -> tuple[Loaded, Any] | None:
    """``goals.json`` of a session directory: what it holds and its raw value, if any."""
    if directory is None:
        return None
    path = os.path.join(directory, LEGACY_FILE)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Loaded(unreadable=f"{LEGACY_FILE} cannot be read ({exc.strerror or exc})"), None
    try:
        data = json.loads(raw)
    except ValueError:
        return Loaded(unreadable=f"{LEGACY_FILE} is not valid JSON"), None
    return _parse(data, LEGACY_FILE), data


class GoalStore:
    """Where one session's goal is kept."""

    def __init__(self, session: Any) -> None:
        self._storage = session.storage
        self._directory = session.directory

    def load(self) -> Loaded:
        if self._storage.has(NAMESPACE, KEY):
            return _parse(self._storage.get(NAMESPACE, KEY), "the stored goal state")
        found = _legacy(self._directory)
        if found is None:
            return Loaded()
        loaded, data = found
        if loaded.unreadable is None:
            self._storage.put(NAMESPACE, KEY, data)  # the one-time import
        return loaded

    def save(self, goal: Goal | None) -> None:
        """Commit the goal (raises `callgate.store.StoreError` if the store cannot take it)."""
        self._storage.put(NAMESPACE, KEY, {"version": VERSION,
                                           "goal": goal.snapshot() if goal else None})
