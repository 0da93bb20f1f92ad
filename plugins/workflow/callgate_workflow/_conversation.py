"""The shapes ``compress`` exchanges with the integrator: messages, records, the protocols."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

import attrs


@attrs.frozen
class Message:
    """One message of the model-visible conversation.

    ``origin`` tells a real user message (``human``) from text the integrator
    put in the user role (``automatic`` round prompts, ``synthetic`` notes);
    only ``role="user", origin="human"`` messages can anchor a compression.
    ``turn`` numbers the conversation's turns (the active one is the largest).
    """

    id: str
    role: str
    text: str
    origin: Literal["human", "automatic", "synthetic"] = "synthetic"
    turn: int = 0


@attrs.frozen
class CompressionRecord:
    """What the integrator should replace in the model's context with ``summary``."""

    direction: Literal["before", "after"]
    anchor_message_id: str
    first_message_id: str
    last_message_id: str
    message_count: int
    summary: str
    focus: str | None


class Conversation(Protocol):
    """The integrator's view of one session's conversation. callgate only reads the messages;
    it never removes or edits one. The integrator shortens the model context on
    ``record_compression`` while the visible history stays whole."""

    active_turn: int

    def messages(self) -> Sequence[Any]: ...

    def record_compression(self, record: CompressionRecord) -> Any: ...


class Summarizer(Protocol):
    """Turns a range of messages into a summary (typically one model call)."""

    async def summarize(self, messages: Sequence[Any], focus: str | None) -> str: ...
