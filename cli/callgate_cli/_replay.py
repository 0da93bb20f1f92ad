"""Replaying a JSON-Lines transcript through one session (host.md §9).

A line is one call ``{"id", "name", "arguments"}`` or a batch ``{"batch": [...]}``,
optionally with ``"origin"``. A bad line (or a call without a string ``name``)
becomes an ``invalid_transcript`` result in its place and replay goes on; such
results never reach the session. Nothing a line holds stops the replay: a line
nested too deeply to read, or bytes that are not UTF-8, is a bad line like any
other, and results holding text that is not Unicode are printed with escapes.

A line ``{"mode": "default"}`` or ``{"mode": "plan"}`` is the human's side of
plan mode: it switches the session's mode between calls and gives no result of
its own. ``{"mode": "default"}`` after ``--mode plan`` is the plan's approval;
the model is told with the next results (a notice), as an agent's user
interface would tell it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import attrs
from callgate import ToolCall, ToolResult, hookimpl
from callgate.host import MODES, Session
from callgate.text import lone_surrogate

from ._serial import call_from_json, result_to_json

MODE_NOTICES = {
    "default": "[plan approved] The user approved the plan and ended plan mode: calls that "
    "change files or run commands are allowed again (permission rules still apply).",
    "plan": "[plan mode] The user switched the session to plan mode: until the plan is "
    "approved, only read-only calls run; present the plan instead of making changes.",
}


@attrs.define
class Entry:
    """One call position of a transcript line: a call to run, or a bad-line result."""

    line: int
    call: ToolCall | None = None
    invalid: ToolResult | None = None
    raw: Any = None


def _invalid(line: int, shape: str, message: str, call_id: Any = None) -> ToolResult:
    result = ToolResult.failure(
        "invalid_transcript", message, f"invalid_transcript:{shape}", {"line": line}
    )
    result.call_id = call_id if isinstance(call_id, str) else None
    return result


@attrs.frozen
class Line:
    """One parsed transcript line: its turn origin, call positions and mode switch."""

    origin: str
    entries: list[Entry]
    mode: str | None = None


def parse_line(text: str, line: int) -> Line:
    """The turn origin, the entries and the mode switch of one transcript line."""
    if lone_surrogate(text):  # raw text holds one only where reading escaped a non-UTF-8 byte
        return Line(
            "human", [Entry(line, invalid=_invalid(line, "json", f"line {line} is not UTF-8 text"))]
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Line(
            "human",
            [
                Entry(
                    line,
                    invalid=_invalid(
                        line,
                        "json",
                        f"line {line} is not valid JSON ({exc.msg} at column {exc.colno})",
                    ),
                )
            ],
        )
    except RecursionError:
        return Line(
            "human",
            [
                Entry(
                    line,
                    invalid=_invalid(
                        line,
                        "json",
                        f"line {line} nests arrays or objects deeper than the JSON reader allows",
                    ),
                )
            ],
        )
    if not isinstance(value, dict):
        return Line(
            "human",
            [
                Entry(
                    line,
                    invalid=_invalid(
                        line, "shape", f"line {line} is not a JSON object (a call or a batch)"
                    ),
                )
            ],
        )
    if "mode" in value and "name" not in value and "batch" not in value:
        return _mode_line(value, line)
    origin, entries = _call_line(value, line)
    return Line(origin, entries)


def _mode_line(value: dict[str, Any], line: int) -> Line:
    mode = value["mode"]
    if set(value) != {"mode"} or mode not in MODES:
        return Line(
            "human",
            [
                Entry(
                    line,
                    invalid=_invalid(
                        line,
                        "shape",
                        f'line {line}: a mode line is {{"mode": "default"}} or '
                        '{"mode": "plan"} and holds nothing else',
                    ),
                )
            ],
        )
    return Line("human", [], mode)


def _call_line(value: dict[str, Any], line: int) -> tuple[str, list[Entry]]:
    origin = value.get("origin", "human")
    if origin not in ("human", "automatic"):
        return "human", [
            Entry(
                line,
                invalid=_invalid(
                    line, "shape", f'line {line}: origin must be "human" or "automatic"'
                ),
            )
        ]
    if "batch" in value:
        items = value["batch"]
        if not isinstance(items, list):
            return origin, [
                Entry(
                    line,
                    invalid=_invalid(line, "shape", f"line {line}: batch must be a list of calls"),
                )
            ]
        return origin, [_entry(item, line, f"L{line}.{i + 1}") for i, item in enumerate(items)]
    return origin, [_entry(value, line, f"L{line}")]


def _entry(item: Any, line: int, default_id: str) -> Entry:
    if not isinstance(item, dict):
        return Entry(
            line,
            invalid=_invalid(
                line, "shape", f"line {line}: a call must be a JSON object with a string name"
            ),
            raw=item,
        )
    call_id = item.get("id", default_id)
    if not isinstance(item.get("name"), str):
        return Entry(
            line,
            invalid=_invalid(line, "shape", f'line {line}: a call needs a string "name"', call_id),
            raw=item,
        )
    if not isinstance(call_id, str):
        call_id = json.dumps(call_id)
    return Entry(line, call_from_json({**item, "id": call_id}), raw=item)


def result_json(result: ToolResult, line: int | None = None) -> dict[str, Any]:
    """A result's replay line (see `_serial`); ``meta.line`` names its transcript line."""
    out = result_to_json(result)
    if line is not None:
        out["meta"].setdefault("line", line)
    return out


def switch_mode(session: Session, mode: str) -> None:
    """The human's plan-mode switch: set ``mode`` and, when it changes, tell the model with
    the next results. Used by replay's mode lines and ``callgate serve``."""
    if session.mode == mode:
        return
    session.set_mode(mode)
    session.notices.put("callgate.mode", MODE_NOTICES[mode])


def json_line(value: Any, indent: int | None = None) -> str:
    """``value`` as one JSON text for a UTF-8 stream: as is where it can be encoded, with
    ``\\u`` escapes where a string holds a lone surrogate (still the same JSON value)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, indent=indent)
    return text


#: the line of a ``--pair`` transcript that ends planning: the human approved the plan
APPROVAL_LINE = {"approve": True}


def approval_index(lines: Sequence[str]) -> int | None:
    """The index of the first approval line (``{"approve": true}``) in ``lines``, if any."""
    for index, text in enumerate(lines):
        if '"approve"' not in text:
            continue
        try:
            if json.loads(text) == APPROVAL_LINE:
                return index
        except (json.JSONDecodeError, RecursionError):
            continue
    return None


async def replay(
    session: Session, lines: Iterable[str], first: int = 1, *, modes: bool = True
) -> AsyncIterator[tuple[Entry, dict[str, Any]]]:
    """Run every line; yields each call position with its JSON result, in order. ``first``
    is the number of the first line (a scripted child replays its transcript line by line).
    ``modes=False`` (a planner/executor pair, whose modes the approval line sets): a mode
    line is a bad line."""
    for number, text in enumerate(lines, first):
        if not text.strip():
            continue
        parsed = parse_line(text, number)
        if parsed.mode is not None and not modes:
            bad = _invalid(
                number,
                "shape",
                f"line {number}: a --pair transcript has no mode "
                'lines; the approval line {"approve": true} ends planning',
            )
            yield Entry(number, invalid=bad), result_json(bad)
            continue
        if parsed.mode is not None:
            switch_mode(session, parsed.mode)
            continue
        entries = parsed.entries
        calls = [e.call for e in entries if e.call is not None]
        results: list[ToolResult] = []
        if calls:
            session.begin_turn(parsed.origin)
            results = await session.run_batch(calls)
        it = iter(results)
        for entry in entries:
            if entry.invalid is not None:
                yield entry, result_json(entry.invalid)
            else:
                yield entry, result_json(next(it), number)


class AnswerFile:
    """``callgate replay --answers FILE``: the user's side of the ``ask`` tool, scripted.

    The file is ``{"answers": {KEY: VALUE, ...}}``: KEY is a question's text or its header
    (the text wins), VALUE an option label, a list of labels (or typed answers), or
    ``null`` for a dismissed question. A call none of whose questions the file names
    finds no one to ask. It implements the ask plugin's ``callgate_ask_user`` hook
    (optional: without the plugin installed, nothing calls it).
    """

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    @classmethod
    def load(cls, path: str) -> AnswerFile:
        """Read and check ``path``; raises `ValueError` saying what is wrong with it."""
        try:
            with open(path, "rb") as fh:
                value = json.loads(fh.read())
        except OSError as exc:
            raise ValueError(f"cannot open answers file {path}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"answers file {path} is not JSON: {exc}") from None
        answers = value.get("answers") if isinstance(value, dict) else None
        if not isinstance(answers, dict):
            raise ValueError(
                f'answers file {path} must be {{"answers": {{question or header: answer}}}}}}'
            )
        for key, answer in answers.items():
            if not (
                answer is None
                or isinstance(answer, str)
                or (isinstance(answer, list) and all(isinstance(a, str) for a in answer))
            ):
                raise ValueError(
                    f"answers file {path}: the answer to {key!r} must be a "
                    "string, a list of strings or null"
                )
        return cls(answers)

    @hookimpl(optionalhook=True)
    def callgate_ask_user(
        self, session: Session, questions: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        found: dict[str, Any] = {}
        for q in questions:
            for key in (q.get("question"), q.get("header")):
                if key in self.answers:
                    answer = self.answers[key]
                    found[q["id"]] = [answer] if isinstance(answer, str) else answer
                    break
        return found or None


def _bad_native_line(line: int, message: str) -> dict[str, Any]:
    return {"type": "invalid_transcript", "line": line, "message": message}


async def replay_native(
    session: Session, rendering: str, lines: Iterable[str], first: int = 1
) -> AsyncIterator[dict[str, Any]]:
    """``callgate replay --provider NAME``: each line one raw call item of the native
    rendering ``rendering`` (a ``tool_use`` block, an ``apply_patch_call`` ...), or a JSON
    list of them for one batch, or a mode line; yields the raw result items, in order
    (the installed rendering's ``run_items``: `callgate_providers.native.run_items`). A
    line that is not JSON, or neither an object nor a list, yields
    ``{"type": "invalid_transcript", "line", "message"}``."""
    from callgate.host import rendering as installed_rendering

    native = installed_rendering(rendering)

    for number, text in enumerate(lines, first):
        if not text.strip():
            continue
        if lone_surrogate(text):
            yield _bad_native_line(number, f"line {number} is not UTF-8 text")
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield _bad_native_line(
                number, f"line {number} is not valid JSON ({exc.msg} at column {exc.colno})"
            )
            continue
        except RecursionError:
            yield _bad_native_line(number, f"line {number} nests too deeply to read")
            continue
        if isinstance(value, dict) and set(value) == {"mode"} and value["mode"] in MODES:
            switch_mode(session, value["mode"])
            continue
        if not isinstance(value, dict | list) or value == []:
            yield _bad_native_line(
                number, f"line {number} is neither a call item (an object) nor a list of them"
            )
            continue
        items = value if isinstance(value, list) else [value]
        session.begin_turn("human")
        for item in await native.run_items(session, items):
            yield item
