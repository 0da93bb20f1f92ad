"""The scripted subagent runner behind ``callgate replay --subagents DIR``.

Without a model, a child's tool calls come from a transcript file in ``DIR``: the
same JSON-Lines format as ``callgate replay`` (a call, a batch, a mode line per
line), run through the child's own session, so its profile, permissions and gates
apply exactly as they would to a model's calls. Which file a child reads:

1. ``<slug>.jsonl``, where ``<slug>`` is the child's ``description`` lowercased with
   every run of characters other than ``a-z0-9`` turned into one ``-`` (``"Scan the
   docs!"`` → ``scan-the-docs.jsonl``); the second child with the same description
   reads ``<slug>.2.jsonl``, the third ``<slug>.3.jsonl``, and so on;
2. else ``child-<N>.jsonl``, ``N`` counting every child of the replay from 1 in the
   order they started (concurrent children start in their call's order);
3. else the child fails (``error_code`` ``no_transcript``, naming both files).

A line ``{"answer": "..."}`` ends the child with that answer (``completed``); a line
``{"outcome": {"status", "answer", "error_code", "retryable"}}`` ends it with that
outcome. Without either, the answer lists each call and its result text. A child
stops after ``max_steps`` call lines when the request sets it (``partial``).

The runner answers the tasks plugin's ``callgate_subagent_runner`` hook (optional:
with no tasks plugin there is nothing to run) and returns plain mappings, which the
tasks plugin reads as outcomes.
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from typing import Any

from callgate import hookimpl

from . import _replay

_SLUG = re.compile(r"[^a-z0-9]+")
#: how much of each result the default answer quotes
QUOTE_CHARS = 2000


def slug(description: str) -> str:
    """The file stem a child with ``description`` reads (see the module docstring)."""
    return _SLUG.sub("-", description.lower()).strip("-") or "child"


class ScriptedSubagents:
    """An in-process plugin: children whose calls come from ``directory``'s transcripts."""

    __name__ = "callgate.scripted_subagents"

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        self._lock = threading.Lock()
        self._started = 0
        self._seen: Counter[str] = Counter()

    @hookimpl(optionalhook=True)
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self

    def transcript_for(self, description: str) -> tuple[str | None, list[str]]:
        """The transcript a new child with ``description`` reads, and every name tried."""
        with self._lock:
            self._started += 1
            stem = slug(description)
            self._seen[stem] += 1
            count, number = self._seen[stem], self._started
        names = [
            f"{stem}.jsonl" if count == 1 else f"{stem}.{count}.jsonl",
            f"child-{number}.jsonl",
        ]
        for name in names:
            path = os.path.join(self.directory, name)
            if os.path.isfile(path):
                return path, names
        return None, names

    async def run(self, request: Any) -> dict[str, Any]:
        """Replay the child's transcript through ``request.session``; the outcome."""
        path, names = self.transcript_for(request.description)
        if path is None:
            return {
                "status": "failed",
                "error_code": "no_transcript",
                "retryable": False,
                "answer": f"no transcript for this child in {self.directory} (looked "
                f"for {' and '.join(names)})",
            }
        with open(path, "rb") as fh:
            lines = fh.read().decode("utf-8", "surrogateescape").splitlines()
        session = request.session
        limit = request.max_steps
        quoted: list[str] = []
        steps = 0
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            ending = _ending(text)
            if ending is not None:
                return ending
            if limit is not None and steps >= limit:
                return {
                    "status": "partial",
                    "error_code": "max_steps",
                    "retryable": True,
                    "answer": _answer(quoted) + f"\n[stopped after max_steps={limit}]",
                }
            steps += 1
            async for _entry, result in _replay.replay(session, [text], number):
                quoted.append(_quote(result))
        return {"status": "completed", "answer": _answer(quoted)}


def _ending(text: str) -> dict[str, Any] | None:
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or "name" in value or "batch" in value:
        return None
    if set(value) == {"answer"} and isinstance(value["answer"], str):
        return {"status": "completed", "answer": value["answer"]}
    if set(value) == {"outcome"} and isinstance(value["outcome"], dict):
        return dict(value["outcome"])
    return None


def _quote(result: dict[str, Any]) -> str:
    content = result.get("content", "")
    text = (
        content
        if isinstance(content, str)
        else "\n".join(
            c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"
        )
    )
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + "…"
    mark = " (error)" if result.get("is_error") else ""
    return f"{result.get('name')}{mark}: {text}"


def _answer(quoted: list[str]) -> str:
    return "\n".join(quoted) if quoted else "(the transcript made no calls)"
