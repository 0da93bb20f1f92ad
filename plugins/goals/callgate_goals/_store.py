"""``goals.json`` in the session directory: ``{"version": 1, "goal": snapshot}``.

Written atomically (temp file + rename) after every change. A file this version
cannot read is reported and never overwritten: the book refuses changes instead
(a corrupt goal must not be silently replaced by a new one).
"""

from __future__ import annotations

import json
import os

import attrs
from callgate.files import replace_file

from ._goal import Goal, MalformedGoal

VERSION = 1
FILE_NAME = "goals.json"


@attrs.frozen
class Loaded:
    """What a session directory held: a goal (or none), or why the file cannot be read."""

    goal: Goal | None = None
    unreadable: str | None = None


class GoalFile:
    """The goal file of one session directory; with no directory, nothing is stored."""

    def __init__(self, directory: str | None) -> None:
        self.path = os.path.join(directory, FILE_NAME) if directory else None

    def load(self) -> Loaded:
        if self.path is None:
            return Loaded()
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return Loaded()
        except OSError as exc:
            return Loaded(unreadable=f"{FILE_NAME} cannot be read ({exc.strerror or exc})")
        try:
            data = json.loads(raw)
        except ValueError:
            return Loaded(unreadable=f"{FILE_NAME} is not valid JSON")
        if not isinstance(data, dict) or "version" not in data:
            return Loaded(unreadable=f"{FILE_NAME} has no version")
        if data["version"] != VERSION:
            return Loaded(unreadable=f"{FILE_NAME} has version {data['version']!r}; this host "
                          f"reads version {VERSION}")
        if data.get("goal") is None:
            return Loaded()
        try:
            return Loaded(goal=Goal.from_snapshot(data["goal"]))
        except MalformedGoal as exc:
            return Loaded(unreadable=f"{FILE_NAME} holds a malformed goal ({exc})")

    def save(self, goal: Goal | None) -> None:
        """Replace the file atomically (no-op without a session directory)."""
        if self.path is None:
            return
        payload = {"version": VERSION, "goal": goal.snapshot() if goal else None}
        data = (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode()
        replace_file(self.path, data, mode=0o600)
