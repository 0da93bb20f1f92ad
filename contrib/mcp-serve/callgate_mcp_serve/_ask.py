"""Answering the ``ask`` tool through MCP elicitation (docs/ask.md).

The ask plugin puts its questions to the ``callgate_ask_user`` hook
(`plugin.ElicitationAsker`). Over MCP the
user sits behind the client that made the ``tools/call``, so this implementation
sends that client one elicitation form (the same channel as approvals, see
`_approval.current_channel`; on a 2026-07-28 connection it travels in an
``InputRequiredResult``):

- each question ``qN`` is one field: a single select (``oneOf`` of ``const``/``title``)
  or, for ``multiSelect``, an array of those (``items.anyOf``), titled with the header
  and described with the question;
- ``qN_other`` is an optional free-text field, the "Other" answer.

``accept`` gives the chosen labels (a typed answer when "Other" is filled); ``decline``
or ``cancel`` dismisses every question. Without a channel (no MCP request, a client
without elicitation) the hook does not answer and the tool tells the model to assume.

The hook is optional, so the server boots whether or not ``callgate-ask`` is installed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ._approval import Elicit
from ._render import visible

log = logging.getLogger("callgate.mcp_serve")

OTHER_SUFFIX = "_other"


def form_schema(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The elicitation form: a select per question and an optional "Other" text field."""
    properties: dict[str, Any] = {}
    for q in questions:
        choices = [
            {
                "const": o["label"],  # the answer names the label exactly
                "title": visible(f"{o['label']} — {o['description']}" if o["description"]
                                 else o["label"]),
            }
            for o in q["options"]
        ]
        if q["multiSelect"]:
            properties[q["id"]] = {
                "type": "array",
                "title": visible(q["header"]),
                "description": visible(q["question"]),
                "items": {"anyOf": choices},
            }
        else:
            properties[q["id"]] = {
                "type": "string",
                "title": visible(q["header"]),
                "description": visible(q["question"]),
                "oneOf": choices,
            }
        properties[q["id"] + OTHER_SUFFIX] = {
            "type": "string",
            "title": f"{visible(q['header'])}: other",
            "description": "Or type your own answer (it replaces the choice above).",
        }
    return {"type": "object", "properties": properties}


def form_message(questions: list[dict[str, Any]]) -> str:
    """The questions for people, one line each: nothing in them is hidden or redraws the
    screen (`visible`: controls, separators and invisible characters escaped)."""
    lines = ["The assistant asks:"]
    lines += [f"{i}. [{visible(q['header'])}] {visible(q['question'])}"
              for i, q in enumerate(questions, 1)]
    return "\n".join(lines)


def answers_from(
    questions: list[dict[str, Any]], action: str, content: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The form's answer in the hook's shape (``{id: [labels]}``; ``None``: dismissed)."""
    if action != "accept":
        return {q["id"]: None for q in questions}
    content = content or {}
    answers: dict[str, Any] = {}
    for q in questions:
        other = content.get(q["id"] + OTHER_SUFFIX)
        chosen = content.get(q["id"])
        if isinstance(other, str) and other.strip():
            answers[q["id"]] = [other]
        elif isinstance(chosen, str):
            answers[q["id"]] = [chosen]
        elif isinstance(chosen, list):
            answers[q["id"]] = [c for c in chosen if isinstance(c, str)]
    return answers


async def ask_questions(elicit: Elicit, questions: list[dict[str, Any]]
                        ) -> dict[str, Any] | None:
    """Put ``questions`` to the user behind the MCP request as one form; ``None`` when the
    client could not be asked."""
    try:
        answer = await elicit(form_message(questions), form_schema(questions))
    except Exception as exc:  # the client failed to answer: no one to ask
        log.warning("ask elicitation failed: %s", exc)
        return None
    if answer is None:
        return None
    action, content = answer
    return answers_from(questions, action, content)


__all__ = ["answers_from", "ask_questions", "form_message", "form_schema"]
