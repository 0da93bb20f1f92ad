"""The goal tools: ``create_goal``, ``get_goal``, ``update_goal`` (schemas, descriptions, execute).

Each tool is a thin shell over `GoalBook`; the result is JSON ``{"goal": snapshot|null}``
plus ``"instruction"`` when the model has something to do or to know.
"""

from __future__ import annotations

import json
from typing import Any

from callgate import ToolContext, Violation

from .._book import Outcome
from .._keys import GOALS


def _render(outcome: Outcome) -> str:
    body: dict[str, Any] = {"goal": outcome.goal.snapshot() if outcome.goal else None}
    if outcome.instruction:
        body["instruction"] = outcome.instruction
    return json.dumps(body, indent=2, ensure_ascii=False)


def run_create(ctx: ToolContext, args: dict[str, Any]) -> str:
    book = ctx.session.extension(GOALS)
    return _render(book.create(args["objective"], args.get("max_goal_rounds")))


def run_get(ctx: ToolContext, args: dict[str, Any]) -> str:
    return _render(ctx.session.extension(GOALS).get())


def run_update(ctx: ToolContext, args: dict[str, Any]) -> str:
    return _render(ctx.session.extension(GOALS).update(args))


def check_create(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    if not args["objective"].strip():
        return [Violation("/objective", "blank", "an objective with non-space characters")]
    return []
