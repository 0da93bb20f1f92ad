"""compress through the full pipeline (goals-and-workflow.md §2; statements 20-23)."""

from __future__ import annotations

import threading
import time
from typing import Any

import callgate_providers as providers
import pytest
from callgate import ToolSpec, hookimpl

from .conftest import Integration, ListConversation, RecordingSummarizer, five_turns


def _setup(workflow, active_turn: int = 5, **summarizer: Any):
    conversation = ListConversation(five_turns(), active_turn)
    summarize = RecordingSummarizer(**summarizer)
    s = workflow(Integration(conversation, summarize))
    return s, conversation, summarize


def test_compress_exists_only_with_both_hooks(workflow) -> None:
    """20. No conversation hook → compress absent from the session's surface and tool list,
    and with no plugin implementing the hooks from providers.surface(host) too (what a host
    lists is what its sessions can have); both hooks → on the session's lean surface."""
    for integration in (None, Integration(None, RecordingSummarizer()),
                        Integration(ListConversation([], 1), None)):
        s = workflow(integration, lean=True)
        assert "compress" not in s.session.tool_names()
        assert "compress" not in s.session.available_tools()
        assert "compress" not in [t["name"] for t in providers.surface(s.session)]
        on_host = "compress" in [t["name"] for t in providers.surface(s.host)]
        assert on_host == (integration is not None)  # implemented, if answering None here
        assert ("compress" in s.host.unhooked()) == (integration is None)
        refused = s.call("compress", {"direction": "before", "anchor": "x"})
        # registered but not in this session: unavailable, as through the proxy (issue 36.6)
        assert refused.error.kind == "unavailable"
        assert refused.text.startswith('tool "compress" is not available in this session')
        assert ("which no loaded plugin implements" in refused.text) == (integration is None)
    s = workflow(Integration(ListConversation([], 1), RecordingSummarizer()), lean=True)
    assert s.session.tool_names() == ["compress", "use_capability"]
    spec = s.session.available_tools()["compress"]
    assert spec.exclusive and spec.contract_read_only and spec.visibility == "surface"


def test_anchor_must_match_exactly_one_real_user_message(workflow) -> None:
    """21. Two user messages → `matches 2 user messages`; assistant-only → not found."""
    s, conversation, summarizer = _setup(workflow)
    two = s.call("compress", {"direction": "before", "anchor": "the parser"})
    assert two.error.signature == "COMPRESS_ANCHOR_AMBIGUOUS" and two.error.kind == "tool_error"
    assert two.text == ("COMPRESS_ANCHOR_AMBIGUOUS: anchor matches 2 user messages; use a "
                        "longer excerpt")
    for anchor in ("Parser added", "Automatic goal round", "add a parser module"):
        missing = s.call("compress", {"direction": "before", "anchor": anchor})
        assert missing.error.signature == "COMPRESS_ANCHOR_NOT_FOUND", anchor
        assert "anchor not found in any user message; copy an exact excerpt" in missing.text
    assert summarizer.calls == [] and conversation.records == []


def test_anchor_and_direction_limits_are_validation_errors(workflow) -> None:
    """21. A 513-byte anchor or direction "sideways" → validation error."""
    s, conversation, summarizer = _setup(workflow)
    for args in ({"direction": "before", "anchor": "x" * 513},
                 {"direction": "before", "anchor": "é" * 257},
                 {"direction": "sideways", "anchor": "Add a parser"},
                 {"direction": "before", "anchor": "   "},
                 {"direction": "before", "anchor": "Add", "focus": "f" * 2001},
                 {"direction": "before", "anchor": "Add", "extra": True}):
        result = s.call("compress", args)
        assert result.error.kind == "invalid_arguments", args
    padded = s.call("compress", {"direction": "before", "anchor": "  Add a parser module  "
                                 + " " * 600})
    assert not padded.is_error, padded.text
    assert summarizer.calls and len(conversation.records) == 1


def test_before_summarizes_everything_before_the_anchor(workflow) -> None:
    """22. before on the 3rd of 5 user messages → the summarizer gets the messages before
    it; one record; messages() unchanged."""
    s, conversation, summarizer = _setup(workflow)
    before = conversation.messages()
    result = s.call("compress", {"direction": "before", "anchor": "Write tests for the",
                                 "focus": "keep decisions"})
    assert not result.is_error, result.text
    reply = summarizer.reply
    assert result.text == (f"Compressed 4 messages (turns 1–2) into a {len(reply)}-character "
                           "summary; visible history is unchanged.")
    [(messages, focus)] = summarizer.calls
    assert [m.id for m in messages] == ["m1", "m2", "m3", "m4"] and focus == "keep decisions"
    [record] = conversation.records
    assert (record.direction, record.anchor_message_id, record.first_message_id,
            record.last_message_id, record.message_count, record.summary, record.focus) == (
        "before", "m5", "m1", "m4", 4, reply, "keep decisions")
    assert conversation.messages() == before


def test_after_summarizes_through_the_last_completed_turn(workflow) -> None:
    s, conversation, summarizer = _setup(workflow)
    result = s.call("compress", {"direction": "after", "anchor": "Add a parser module"})
    assert result.text.startswith("Compressed 7 messages (turns 2–4) into a ")
    [(messages, focus)] = summarizer.calls
    assert [m.id for m in messages] == ["m3", "m4", "m5", "m6", "m7", "m8", "m9"]
    assert focus is None
    assert conversation.records[0].last_message_id == "m9"


def test_nothing_to_compress(workflow) -> None:
    """23. after anchored in the active turn → `nothing completed to compress`."""
    s, conversation, summarizer = _setup(workflow)
    current = s.call("compress", {"direction": "after", "anchor": "Now release it"})
    assert current.error.signature == "COMPRESS_NOTHING_TO_COMPRESS"
    assert "the anchored message is in the current turn; nothing completed to compress" \
        in current.text
    first = s.call("compress", {"direction": "before", "anchor": "Please set up"})
    assert first.error.signature == "COMPRESS_NOTHING_TO_COMPRESS"
    assert "nothing precedes the anchored message" in first.text
    assert summarizer.calls == [] and conversation.records == []


@pytest.mark.parametrize("summarizer", [{"error": RuntimeError("model down")}, {"reply": "  "}])
def test_a_failing_summarizer_records_nothing(workflow, summarizer) -> None:
    """23. A summarizer raising (or answering blank) → error, no record."""
    s, conversation, summarize = _setup(workflow, **summarizer)
    result = s.call("compress", {"direction": "before", "anchor": "Document the parser"})
    assert result.error.signature == "COMPRESS_SUMMARIZER_FAILED"
    assert result.error.kind == "tool_error" and "nothing was recorded" in result.text
    assert len(summarize.calls) == 1 and conversation.records == []


class _Probe:
    """A read-only tool that records when it ran (to prove compress runs alone)."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self.lock = threading.Lock()

    def run(self, ctx: Any, args: dict) -> str:
        start = time.monotonic()
        time.sleep(0.15)
        with self.lock:
            self.spans.append((start, time.monotonic()))
        return "probed"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(name="probe", description="records its run", read_only=True,
                              schema={"type": "object", "properties": {}}, execute=self.run))


class _SlowSummarizer(RecordingSummarizer):
    def __init__(self) -> None:
        super().__init__()
        self.span: tuple[float, float] | None = None

    async def summarize(self, messages, focus):
        import anyio

        start = time.monotonic()
        await anyio.sleep(0.15)
        self.span = (start, time.monotonic())
        return await super().summarize(messages, focus)


def test_compress_never_overlaps_other_calls_of_its_batch(workflow) -> None:
    probe = _Probe()
    summarizer = _SlowSummarizer()
    s = workflow(Integration(ListConversation(five_turns(), 5), summarizer), extra=[probe])
    results = s.run(("probe", {}), ("compress", {"direction": "before",
                                                  "anchor": "Document the parser"}),
                    ("probe", {}))
    assert [r.is_error for r in results] == [False, False, False]
    (_, a_end), (b_start, _) = sorted(probe.spans)
    c_start, c_end = summarizer.span
    assert a_end <= c_start and c_end <= b_start
