"""``ask`` as declared data: name, description, schema and flags, with its code named by
`callgate.deferred` (issue 38). Registering the plugin imports this module and neither anyio
nor the question handling; ``tools/ask.py`` is imported by the first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
ASK_KNOWN_AS = ("AskUserQuestion", "ask_user", "ask_followup_question", "question")


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


ASK = ToolSpec(
    runs_at="host",
    name="ask", known_as=ASK_KNOWN_AS,
    description=ASK_DESCRIPTION,
    schema=ASK_SCHEMA,
    execute=deferred("callgate_ask.tools.ask:run_ask"),
    validate=deferred("callgate_ask.tools.ask:validate"),
    read_only=True,
    destructive=False,
    groups=("ask",),
)
