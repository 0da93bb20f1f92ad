"""What the model reads about a fleet: a summary line, then a block per item.

A block is ``── <id> ── <description>``, the child's ``Subagent reference`` and outcome
(or why it was skipped), then its answer's preview. Everything fits one budget B
(``[results] max_chars`` − 512, as for ``parallel_tasks``): the blocks' receipts first
(descriptions give way when they would take more than half of B), then the previews
share what is left max-min fairly, so a short answer is shown whole and long ones are
cut evenly, each pointing at ``read_subagent_result``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from . import _text
from ._fleet_run import Slot


def summary(slots: Sequence[Slot], stopped: str | None) -> str:
    counts = Counter(s.status for s in slots)
    parts = [
        f"{counts[k]} {k}"
        for k in ("completed", "partial", "failed", "cancelled", "skipped", "running", "pending")
        if counts[k]
    ]
    head = (
        f"Completed fleet of {len(slots)} tasks"
        if not stopped
        else f"Fleet of {len(slots)} tasks stopped ({stopped})"
    )
    return f"{head}: {', '.join(parts)}."


def _receipt(slot: Slot, description_room: int | None) -> str:
    description = slot.item.description
    if description_room is not None:
        description = description[: max(0, description_room)]
    head = f"── {slot.item.id} ── {description}".rstrip()
    if slot.record is None:
        why = f"Skipped: {slot.reason}" if slot.status == "skipped" else f"Status: {slot.status}"
        return f"{head}\n{why} (no child started)"
    text = f"{head}\nSubagent reference: {slot.record.ref}\n{_text.outcome_line(slot.record)}"
    if slot.record.answer:
        text += f"\n{_text.answer_label(slot.record, True)}\n"
    return text


def _fit(slot: Slot, limit: int) -> str:
    full = _receipt(slot, None)
    over = len(full) - limit
    if over <= 0:
        return full
    return _receipt(slot, len(slot.item.description) - over)[: max(0, limit)]


def fleet_text(slots: Sequence[Slot], stopped: str | None, max_chars: int) -> str:
    """The whole result, never longer than B."""
    total = _text.budget(max_chars)
    head = summary(slots, stopped)[:total]
    n = len(slots)
    separators = 2 * n
    receipts = [_receipt(s, None) for s in slots]
    half = (total - len(head)) // 2
    if sum(map(len, receipts)) + separators > half:
        each = max(0, (half - separators) // n)
        receipts = [_fit(s, each) for s in slots]
    room = total - len(head) - sum(map(len, receipts)) - separators
    answers = [(s.record.answer or "") if s.record is not None else "" for s in slots]
    shares = _text.fair_shares([len(a) for a in answers], room)
    blocks = [
        receipt + (_text.cut(answer, share, s.record.ref) if s.record and answer else "")
        for receipt, s, answer, share in zip(receipts, slots, answers, shares, strict=True)
    ]
    text = "\n\n".join([head, *blocks])
    return text[:total]
