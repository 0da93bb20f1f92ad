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
from callgate import ToolContext, ToolResult, ToolSpec

from .. import _questions

log = logging.getLogger("callgate.ask")

_TEXT = {"type": "string", "minLength": 1, "pattern": r"\S"}

OPTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["label", "description"],
    "properties": {
        "label": {
            **_TEXT,
            "maxLength": 60,
            "description": "The choice as the user sees it (1-5 words).",
        },
        "description": {
            "type": "string",
            "maxLength": 300,
            "description": "What choosing it means or implies.",
        },
    },
}

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["header", "question", "options"],
    "properties": {
        "header": {
            **_TEXT,
            "maxLength": 12,
            "description": "A very short label for the question (at most 12 "
            'characters), e.g. "Database".',
        },
        "question": {
            **_TEXT,
            "maxLength": 1000,
            "description": "The complete question, ending with a question mark.",
        },
        "options": {
            "type": "array",
            "minItems": 2,
            "maxItems": 4,
            "items": OPTION_SCHEMA,
            "description": "2-4 distinct choices; the user may also type their own answer.",
        },
        "multiSelect": {
            "type": "boolean",
            "default": False,
            "description": "Let the user pick more than one option.",
        },
    },
}

ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["questions"],
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": QUESTION_SCHEMA,
            "description": "1-4 questions to ask the user at once.",
        },
    },
}

ASK_DESCRIPTION = (
    "Ask the user 1 to 4 multiple-choice questions when a decision is theirs to make "
    "(a preference, an ambiguous requirement, a choice between approaches) and wait for the "
    "answers. Each question has a short header, the question and 2-4 options with a label "
    "and a description; multiSelect allows several. The result lists each answer as "
    "'- header: choice'. When no one can answer, the result says so: then pick the most "
    "reasonable option yourself and say which one you assumed."
)


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


ASK = ToolSpec(
    name="ask",
    description=ASK_DESCRIPTION,
    schema=ASK_SCHEMA,
    execute=run_ask,
    validate=validate,
    read_only=True,
    destructive=False,
    groups=("ask",),
)
