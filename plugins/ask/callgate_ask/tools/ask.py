"""The ``ask`` tool: the same shape as Claude Code's AskUserQuestion.

The answer comes from the first ``callgate_ask_user`` implementation that answers
(`hookspecs`). With none, or none within ``[ask] timeout_seconds``, the model is told
to assume and say so: ``ask`` never hangs a headless session. It changes nothing, so
it is read-only (it runs in plan mode), but a strict read-only child never runs it
(the child profile refuses it by name).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import anyio
from callgate import ToolContext, ToolResult

from .. import _questions

log = logging.getLogger("callgate.ask")

async def run_ask(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    questions = _questions.questions_of(args)
    timeout = ctx.config.get("timeout_seconds", 600)
    raw = None

    def ask_hook() -> Any:
        return ctx.session.host.pm.hook.callgate_ask_user(session=ctx.session, questions=questions)

    meta: dict[str, Any] = {"questions": [q["id"] for q in questions]}
    with anyio.move_on_after(timeout) as scope:
        try:
            # a worker thread: a frontend that blocks in a sync hook cannot stall the loop,
            # and the timeout walks away from it (the context, e.g. the MCP channel, follows)
            raw = await anyio.to_thread.run_sync(ask_hook, abandon_on_cancel=True)
            if inspect.isawaitable(raw):
                raw = await raw
        except Exception:
            log.exception("ask: the callgate_ask_user hook failed")
            return ToolResult.ok(_questions.NO_ONE, {**meta, "status": "no_one_to_ask"})
    if scope.cancelled_caught:
        log.warning("ask: no answer within %ss", timeout)
        return ToolResult.ok(
            _questions.TIMED_OUT.format(seconds=timeout), {**meta, "status": "timed_out"}
        )
    answers = _questions.clean_answers(questions, raw)
    if answers is None:
        return ToolResult.ok(_questions.NO_ONE, {**meta, "status": "no_one_to_ask"})
    if answers and all(v is None for v in answers.values()) and len(answers) == len(questions):
        return ToolResult.ok(_questions.DISMISSED, {**meta, "status": "dismissed"})
    return ToolResult.ok(
        _questions.answered_text(questions, answers),
        {**meta, "status": "answered", "answers": answers},
    )


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Any]:
    return _questions.violations(args)
