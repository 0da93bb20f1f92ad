"""Fixtures for the workflow tests: sessions, and an integrator's conversation doubles."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_workflow
import pytest
from callgate import hookimpl
from callgate_workflow import Message


class ListConversation:
    """An integrator's conversation kept as a list; records compressions, edits nothing."""

    def __init__(self, messages: Sequence[Message], active_turn: int) -> None:
        self._messages = list(messages)
        self.active_turn = active_turn
        self.records: list[Any] = []

    def messages(self) -> list[Message]:
        return list(self._messages)

    def record_compression(self, record: Any) -> None:
        self.records.append(record)


class RecordingSummarizer:
    """Returns ``reply`` (or raises ``error``) and remembers what it was asked."""

    def __init__(self, reply: str = "The user set up the repo and added a parser.",
                 error: Exception | None = None) -> None:
        self.reply = reply
        self.error = error
        self.calls: list[tuple[list[Message], str | None]] = []

    async def summarize(self, messages: Sequence[Message], focus: str | None) -> str:
        self.calls.append((list(messages), focus))
        if self.error is not None:
            raise self.error
        return self.reply


class Integration:
    """The integrator's plugin: answers the two workflow hooks (either may be None)."""

    def __init__(self, conversation: Any = None, summarizer: Any = None) -> None:
        self.conversation = conversation
        self.summarizer = summarizer

    @hookimpl
    def callgate_session_conversation(self, session: Any) -> Any:
        return self.conversation

    @hookimpl
    def callgate_session_summarizer(self, session: Any) -> Any:
        return self.summarizer


def five_turns() -> list[Message]:
    """Five human user messages (turns 1-5) with replies, plus one automatic round prompt."""
    return [
        Message("m1", "user", "Please set up the repo", "human", 1),
        Message("m2", "assistant", "Repo set up. Next: the parser module", "synthetic", 1),
        Message("m3", "user", "Add a parser module", "human", 2),
        Message("m4", "assistant", "Parser added", "synthetic", 2),
        Message("m5", "user", "Write tests for the parser", "human", 3),
        Message("m6", "assistant", "Tests written", "synthetic", 3),
        Message("m7", "user", "Automatic goal round 1: parser docs", "automatic", 4),
        Message("m8", "user", "Document the parser", "human", 4),
        Message("m9", "assistant", "Docs done", "synthetic", 4),
        Message("m10", "user", "Now release it", "human", 5),
    ]


def stored(s: Any, key: str) -> Any:
    """The workflow value the session store holds for the session (committed), or None."""
    s.session.flush()
    return s.session.store.state(s.session.id).get(("workflow", key))


@pytest.fixture
def workflow(callgate_session: Callable[..., Any], tmp_path: Path) -> Callable[..., Any]:
    """``workflow(integration=None, lean=False, session_dir=..., files=None, ...)``."""

    def make(integration: Any = None, *, lean: bool = False, files: Any = None,
             session_dir: Path | None = None, host: Any = None, workspace: Path | None = None,
             extra: Sequence[Any] = ()) -> Any:
        plugins: list[Any] = [callgate_workflow, *extra]
        if integration is not None:
            plugins.append(integration)
        if lean:
            plugins.append(callgate_capability)
        directory = session_dir if session_dir is not None else tmp_path / "session"
        return callgate_session(plugins=plugins, files=files, surface="lean" if lean else "full",
                                session_dir=directory, host=host, workspace=workspace)

    return make
