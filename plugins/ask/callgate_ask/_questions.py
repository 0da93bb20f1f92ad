"""The ``ask`` arguments as the questions integrators see, and their answers as text.

Answers an integrator returns are checked here, not trusted: an answer that names no
question is dropped, a single-select question keeps one answer, free text is capped,
so what the model reads is always the shape this module documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from callgate import Violation

#: How many characters of one free-text answer the model reads.
MAX_FREE_TEXT = 2000

NO_ONE = (
    "No one is available to answer (this session has no interactive user). Do not wait for "
    "an answer: choose the most reasonable option for each question yourself, say in your "
    "reply which assumption you made, and continue."
)
TIMED_OUT = (
    "The user did not answer within {seconds} seconds. Do not wait: choose the most "
    "reasonable option for each question yourself, say in your reply which assumption you "
    "made, and continue."
)
DISMISSED = (
    "The user dismissed the questions without answering. Stop and wait for the user's "
    "instructions; do not assume an answer."
)
UNANSWERED = "(not answered: assume the most reasonable option and say so)"


def questions_of(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The questions as integrators receive them: ids ``q1``..``qN``, every key present."""
    return [
        {
            "id": f"q{i}",
            "header": q["header"],
            "question": q["question"],
            "options": [
                {"label": o["label"], "description": o.get("description", "")} for o in q["options"]
            ],
            "multiSelect": bool(q.get("multiSelect", False)),
        }
        for i, q in enumerate(args["questions"], 1)
    ]


def violations(args: Mapping[str, Any]) -> list[Violation]:
    """What the schema cannot say: labels unique within a question, questions unique."""
    found: list[Violation] = []
    seen_questions: set[str] = set()
    for i, q in enumerate(args.get("questions", [])):
        text = q["question"].strip()
        if text in seen_questions:
            found.append(
                Violation(
                    f"/questions/{i}/question",
                    "unique",
                    "a question not asked earlier in this call",
                )
            )
        seen_questions.add(text)
        labels: set[str] = set()
        for j, option in enumerate(q["options"]):
            label = option["label"].strip()
            if label in labels:
                found.append(
                    Violation(
                        f"/questions/{i}/options/{j}/label",
                        "unique",
                        "a label not used by another option of this question",
                    )
                )
            labels.add(label)
    return found


def clean_answers(questions: list[dict[str, Any]], raw: Any) -> dict[str, list[str] | None] | None:
    """The integrator's reply reduced to ``{id: [answers] | None}`` (``None``: dismissed), or
    ``None`` when the reply is not a mapping (nobody answered)."""
    if not isinstance(raw, Mapping):
        return None
    answers: dict[str, list[str] | None] = {}
    for q in questions:
        if q["id"] not in raw:
            continue
        value = raw[q["id"]]
        if value is None:
            answers[q["id"]] = None
            continue
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list | tuple):
            continue
        picked = [v.strip()[:MAX_FREE_TEXT] for v in values if isinstance(v, str) and v.strip()]
        picked = list(dict.fromkeys(picked))
        if not q["multiSelect"]:
            picked = picked[:1]
        if picked:
            answers[q["id"]] = picked
    return answers


def _shown(question: dict[str, Any], picked: list[str]) -> str:
    labels = {o["label"] for o in question["options"]}
    return ", ".join(p if p in labels else f"(typed) {p}" for p in picked)


def answered_text(questions: list[dict[str, Any]], answers: dict[str, list[str] | None]) -> str:
    """``The user answered:`` and one ``- header: a, b`` line per question."""
    lines = ["The user answered:"]
    for q in questions:
        picked = answers.get(q["id"])
        if q["id"] in answers and picked is None:
            shown = "(dismissed: do not assume an answer to this one)"
        elif not picked:
            shown = UNANSWERED
        else:
            shown = _shown(q, picked)
        lines.append(f"- {q['header']}: {shown}")
    return "\n".join(lines)
