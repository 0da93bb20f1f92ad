"""``compress``: summarize a completed stretch of the conversation without deleting it.

The anchor must be an exact, case-sensitive excerpt of exactly one real user
message (role ``user``, origin ``human``). ``before`` summarizes everything
before that message; ``after`` summarizes from it through the last completed
turn. The integrator's summarizer runs once; on success the integrator gets a
`CompressionRecord`, and callgate never touches a message.
"""

from __future__ import annotations

import inspect
from typing import Any

from callgate import ToolContext, ToolError, ToolSpec, Violation

from .._conversation import CompressionRecord

ANCHOR_MAX_BYTES = 512
FOCUS_MAX_BYTES = 2000

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["direction", "anchor"],
    "properties": {
        "direction": {"type": "string", "enum": ["before", "after"],
                      "description": "before: summarize everything before the anchored user "
                                     "message; after: summarize from it through the last "
                                     "completed turn."},
        "anchor": {"type": "string", "minLength": 1,
                   "description": "An exact excerpt (up to 512 bytes) of one real user "
                                  "message."},
        "focus": {"type": ["string", "null"],
                  "description": "What the summary must keep (up to 2000 bytes)."},
    },
}

DESCRIPTION = (
    "Shrink the model-visible conversation by summarizing part of it; the visible history is "
    "kept. Only use it when the user explicitly asks to compress the context. direction "
    "before summarizes everything before the anchored user turn and keeps that turn and what "
    "follows; after summarizes from the anchored turn through the last completed turn and "
    "keeps the active turn. anchor must be an exact, unique excerpt of a real user message: if "
    "several messages match, use a longer excerpt."
)


def _error(code: str, message: str) -> ToolError:
    return ToolError("tool_error", f"COMPRESS_{code}: {message}", f"COMPRESS_{code}")


def _providers(session: Any) -> tuple[Any, Any]:
    hook = session.host.pm.hook
    return (hook.callgate_session_conversation(session=session),
            hook.callgate_session_summarizer(session=session))


def available(session: Any) -> bool:
    """``compress`` exists only where the integrator provides a conversation and a summarizer."""
    conversation, summarizer = _providers(session)
    return conversation is not None and summarizer is not None


def check(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    out = []
    anchor = len(args["anchor"].strip().encode("utf-8", "surrogatepass"))
    if anchor == 0:
        out.append(Violation("/anchor", "blank", "an excerpt with non-space characters"))
    elif anchor > ANCHOR_MAX_BYTES:
        out.append(Violation("/anchor", "maxBytes",
                             f"at most {ANCHOR_MAX_BYTES} UTF-8 bytes after trimming"))
    focus = args.get("focus")
    if focus is not None and len(focus.encode("utf-8", "surrogatepass")) > FOCUS_MAX_BYTES:
        out.append(Violation("/focus", "maxBytes", f"at most {FOCUS_MAX_BYTES} UTF-8 bytes"))
    return out


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def select(messages: list[Any], anchor: str, direction: str,
           active_turn: int) -> tuple[Any, list[Any]]:
    """The anchored message and the range to summarize, or a `ToolError` saying why not."""
    hits = [i for i, m in enumerate(messages)
            if m.role == "user" and m.origin == "human" and anchor in m.text]
    if not hits:
        raise _error("ANCHOR_NOT_FOUND",
                     "anchor not found in any user message; copy an exact excerpt")
    if len(hits) > 1:
        raise _error("ANCHOR_AMBIGUOUS",
                     f"anchor matches {len(hits)} user messages; use a longer excerpt")
    at = hits[0]
    anchored = messages[at]
    if direction == "before":
        chosen = messages[:at]
        if not chosen:
            raise _error("NOTHING_TO_COMPRESS", "nothing precedes the anchored message")
        return anchored, chosen
    if anchored.turn >= active_turn:
        raise _error("NOTHING_TO_COMPRESS", "the anchored message is in the current turn; "
                     "nothing completed to compress")
    last = max(i for i in range(at, len(messages)) if messages[i].turn < active_turn)
    return anchored, messages[at:last + 1]


async def run(ctx: ToolContext, args: dict[str, Any]) -> str:
    import anyio  # here: importing anyio reads its own source (~10% of a cold start)

    conversation, summarizer = _providers(ctx.session)
    if conversation is None or summarizer is None:
        raise ToolError("unavailable", "compress: the integrator no longer provides a "
                        "conversation and a summarizer for this session", "unavailable:compress")
    anchor, direction, focus = args["anchor"].strip(), args["direction"], args.get("focus")
    messages = list(await _maybe_await(conversation.messages()))
    anchored, chosen = select(messages, anchor, direction, conversation.active_turn)
    summarize = summarizer.summarize
    try:
        if inspect.iscoroutinefunction(summarize):
            summary = await summarize(list(chosen), focus)
        else:
            summary = await _maybe_await(await anyio.to_thread.run_sync(
                summarize, list(chosen), focus))
    except Exception as exc:
        raise _error("SUMMARIZER_FAILED", f"the summarizer failed ({type(exc).__name__}: "
                     f"{exc}); nothing was recorded") from None
    if not isinstance(summary, str) or not summary.strip():
        raise _error("SUMMARIZER_FAILED", "the summarizer returned an empty summary; nothing "
                     "was recorded")
    summary = summary.strip()
    record = CompressionRecord(direction=direction, anchor_message_id=anchored.id,
                               first_message_id=chosen[0].id, last_message_id=chosen[-1].id,
                               message_count=len(chosen), summary=summary, focus=focus)
    await _maybe_await(conversation.record_compression(record))
    turns = [m.turn for m in chosen]
    return (f"Compressed {len(chosen)} messages (turns {min(turns)}–{max(turns)}) into a "
            f"{len(summary)}-character summary; visible history is unchanged.")


TOOL = ToolSpec(name="compress", description=DESCRIPTION, schema=SCHEMA, execute=run,
                validate=check, read_only=True, exclusive=True, visibility="surface",
                surface_order=80, available=available, groups=("workflow",),
                requires_hooks=("callgate_session_conversation", "callgate_session_summarizer"),
                runs_at="host")
