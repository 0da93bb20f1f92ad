"""``todo_write`` and ``session.extension(TODOS)``: the model's task list, replaced whole on
every call.

Todo states describe progress only: there is no serial rule and no sign-off,
so any number of items may be in progress. Ids are stable: a supplied id is
kept, an item without one takes back the id of an unclaimed previous item with
the same text, else a fresh ``t<N>``. Dropping an unfinished item is allowed,
but the acknowledgement warns about it (rewrites that silently lose items are
the common failure).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import attrs
from callgate import SessionKey, ToolContext, ToolSpec, Violation

from .._state import StateFile

STATUSES = ("pending", "in_progress", "completed")
UNFINISHED = ("pending", "in_progress")
ISSUED = re.compile(r"^t([0-9]{1,18})$")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["todos"],
    "properties": {
        "todos": {
            "type": "array",
            "maxItems": 100,
            "description": "The complete new list; it replaces the previous one.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["content", "status"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$",
                           "description": "Keep the id an earlier call returned; omit it for a "
                                          "new item."},
                    "content": {"type": "string", "minLength": 1, "maxLength": 500,
                                "description": "What the item is, in imperative form."},
                    "status": {"type": "string", "enum": list(STATUSES)},
                    "active_form": {"type": "string", "maxLength": 200,
                                    "description": "The item in progressive form, for a "
                                                   "status line (\"Running tests\")."},
                    # minimum/maximum rather than an integer enum: Gemini's schema takes
                    # string enums only, and every provider accepts number bounds.
                    "level": {"type": "integer", "minimum": 0, "maximum": 1, "default": 0,
                              "description": "0 for a task, 1 for a sub-step of the task "
                                             "above it."},
                },
            },
        },
    },
}

DESCRIPTION = (
    "Replace the task list you keep for this work with a new complete list. Send every item "
    "each time, with the id it was given, and a status of pending, in_progress or completed. "
    "The statuses only describe progress: nothing has to run in order and the host signs "
    "nothing off. Items that vanish while unfinished are reported back."
)


@attrs.frozen
class Todo:
    """One item of the list."""

    id: str
    content: str
    status: str
    active_form: str | None = None
    level: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "content": self.content, "status": self.status}
        if self.active_form is not None:
            out["active_form"] = self.active_form
        out["level"] = self.level
        return out


#: ``session.extension(TODOS)``: this plugin's per-session object
TODOS: SessionKey[TodoList] = SessionKey("todos")


class TodoList:
    """``session.extension(TODOS)``: the current list, kept in the session store and restored
    on resume."""

    def __init__(self, session: Any) -> None:
        self._lock = threading.Lock()
        self._file = StateFile(session, "todos", "todos.json")
        self._items: tuple[Todo, ...] = ()
        self._issued = 0
        data = self._file.load()
        if data is not None:
            try:
                self._items = tuple(Todo(**item) for item in data.get("todos", []))
                self._issued = int(data.get("issued", 0))
            except (TypeError, ValueError):
                self._items, self._issued = (), 0

    def items(self) -> list[Todo]:
        """The current list, in order."""
        return list(self._items)

    def __iter__(self) -> Any:
        return iter(self.items())

    def __len__(self) -> int:
        return len(self._items)

    def replace(self, raw: Sequence[dict[str, Any]]) -> tuple[list[Todo], list[Todo]]:
        """Make ``raw`` (already validated) the list; returns (new list, dropped unfinished)."""
        with self._lock:
            previous = self._items
            issued = self._issued
            supplied = {item["id"] for item in raw if "id" in item}
            for ident in supplied:
                found = ISSUED.match(ident)
                if found:
                    issued = max(issued, int(found.group(1)))
            reusable: dict[str, list[str]] = {}
            for old in previous:
                if old.id not in supplied:
                    reusable.setdefault(old.content, []).append(old.id)
            new: list[Todo] = []
            for item in raw:
                content = item["content"].strip()
                ident = item.get("id")
                if ident is None:
                    pool = reusable.get(content)
                    if pool:
                        ident = pool.pop(0)
                    else:
                        issued += 1
                        ident = f"t{issued}"
                new.append(Todo(ident, content, item["status"], item.get("active_form"),
                                item.get("level", 0)))
            kept = {t.id for t in new}
            dropped = [t for t in previous if t.id not in kept and t.status in UNFINISHED]
            self._file.save({"issued": issued, "todos": [t.to_json() for t in new]})
            self._items, self._issued = tuple(new), issued
            return new, dropped


def acknowledgement(items: Sequence[Todo], dropped: Sequence[Todo]) -> str:
    counts = {s: sum(1 for t in items if t.status == s) for s in STATUSES}
    lines = [f"Todos updated: {len(items)} total — {counts['completed']} completed, "
             f"{counts['in_progress']} in progress, {counts['pending']} pending."]
    for t in items:
        lines.append(f"{'  ' * t.level}- [{t.id}] {t.status}: {t.content}")
    if dropped:
        listed = ", ".join(f'[{t.id}] "{t.content}" ({t.status})' for t in dropped)
        if len(dropped) == 1:
            lines.append(f"Warning: 1 unfinished item was dropped: {listed}. Include it again "
                         "if that was not intended.")
        else:
            lines.append(f"Warning: {len(dropped)} unfinished items were dropped: {listed}. "
                         "Include them again if that was not intended.")
    return "\n".join(lines)


def check(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    out = []
    first: dict[str, int] = {}
    for i, item in enumerate(args["todos"]):
        if not item["content"].strip():
            out.append(Violation(f"/todos/{i}/content", "blank",
                                 f"todo {i}: content is required"))
        ident = item.get("id")
        if ident is None:
            continue
        if ident in first:
            out.append(Violation(f"/todos/{i}/id", "duplicate",
                                 f'todo {i}: duplicate id "{ident}" (also todo {first[ident]})'))
        else:
            first[ident] = i
    return out


def run(ctx: ToolContext, args: dict[str, Any]) -> str:
    items, dropped = ctx.session.extension(TODOS).replace(args["todos"])
    return acknowledgement(items, dropped)


TOOL = ToolSpec(name="todo_write", description=DESCRIPTION, schema=SCHEMA, execute=run,
                validate=check, read_only=True, groups=("workflow",))
