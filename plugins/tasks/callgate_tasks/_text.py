"""What the model reads about children: receipts, fair previews, result pages.

Everything here is measured in characters against one budget B (``[results]
max_chars`` − 512), so the host never has to truncate a task result: the tool
itself shows what fits and points at ``read_subagent_result`` for the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import SubagentRecord

SLACK = 512
PAGE_SLACK = 200


def budget(max_chars: int) -> int:
    """B: the characters a task result may use, leaving room for notices."""
    return max(0, max_chars - SLACK)


def outcome_line(record: SubagentRecord) -> str:
    line = (f"Subagent outcome: status={record.status} "
            f"retryable={'true' if record.retryable else 'false'}")
    if record.error_code:
        line += f" error_code={record.error_code}"
    return line


def marker(ref: str) -> str:
    return (f"\n…[preview truncated; read the full result with "
            f'read_subagent_result(ref="{ref}")]…\n')


def cut(answer: str, limit: int, ref: str) -> str:
    """``answer`` whole if it fits in ``limit`` characters, else head and tail halves around
    the truncation marker (never more than ``limit`` characters)."""
    if len(answer) <= limit:
        return answer
    mark = marker(ref)
    room = limit - len(mark)
    if room <= 0:
        return mark[:max(0, limit)]
    tail = room // 2
    head = room - tail
    return answer[:head] + mark + (answer[len(answer) - tail:] if tail else "")


def fair_shares(demands: Sequence[int], total: int) -> list[int]:
    """Max-min fair split of ``total``: a demand below an equal share is met in full and
    its leftover goes to the others; the rest split what remains equally."""
    shares = [0] * len(demands)
    remaining = max(0, total)
    left = len(demands)
    for i in sorted(range(len(demands)), key=lambda k: demands[k]):
        share = remaining // left
        shares[i] = min(demands[i], share)
        remaining -= shares[i]
        left -= 1
    return shares


def answer_label(record: SubagentRecord, preview: bool) -> str:
    label = "Final answer" if record.status == "completed" else "Last visible answer"
    return f"{label} preview:" if preview else f"{label}:"


def one_child(record: SubagentRecord, max_chars: int) -> str:
    """``task``'s text: the receipt, then the answer cut to what is left of B."""
    text = f"Subagent reference: {record.ref}\n{outcome_line(record)}"
    if not record.answer:
        return text
    text += f"\n\n{answer_label(record, False)}\n"
    return text + cut(record.answer, budget(max_chars) - len(text), record.ref)


def _receipt(record: SubagentRecord, i: int, n: int, description_room: int | None) -> str:
    description = record.description
    if description_room is not None:
        description = description[:max(0, description_room)]
    text = f"[{i}/{n}] {description}\nSubagent reference: {record.ref}\n{outcome_line(record)}"
    if record.answer:
        text += f"\n{answer_label(record, True)}\n"
    return text


def many_children(records: Sequence[SubagentRecord], max_chars: int) -> str:
    """``parallel_tasks``' text: every receipt, then previews sharing what is left of B."""
    n = len(records)
    total = budget(max_chars)
    separators = 2 * (n - 1)
    receipts = [_receipt(r, i + 1, n, None) for i, r in enumerate(records)]
    if sum(map(len, receipts)) + separators > total // 2:
        each = (total // 2 - separators) // n
        receipts = [_fit_receipt(r, i + 1, n, each) for i, r in enumerate(records)]
    room = total - sum(map(len, receipts)) - separators
    demands = [len(r.answer or "") for r in records]
    shares = fair_shares(demands, room)
    blocks = [receipt + cut(r.answer or "", share, r.ref)
              for receipt, r, share in zip(receipts, records, shares, strict=True)]
    return "\n\n".join(blocks)


def _fit_receipt(record: SubagentRecord, i: int, n: int, limit: int) -> str:
    """A receipt cut to ``limit`` characters: the description gives way first."""
    full = _receipt(record, i, n, None)
    over = len(full) - limit
    if over <= 0:
        return full
    shorter = _receipt(record, i, n, len(record.description) - over)
    return shorter[:max(0, limit)]


def char_start(data: bytes, pos: int) -> int:
    """Move ``pos`` back to the first byte of the UTF-8 character it falls in."""
    while 0 < pos < len(data) and (data[pos] & 0xC0) == 0x80:
        pos -= 1
    return pos


def page_bounds(data: bytes, offset: int, limit: int) -> tuple[int, int]:
    """The page ``[start, end)`` for ``offset``/``limit`` on character boundaries."""
    start = char_start(data, offset)
    end = min(len(data), start + limit)
    if end < len(data):
        end = char_start(data, end)
    return start, end


def page(record: SubagentRecord, start: int, end: int, data: bytes) -> str:
    head = (f"Subagent result {record.ref} (status={record.status}, bytes {start}-{end} of "
            f"{len(data)}):\n")
    body = data[start:end].decode("utf-8", "surrogatepass")
    if end < len(data):
        tail = (f'\n\nMore remains. Call read_subagent_result with ref="{record.ref}" and '
                f"offset_bytes={end}.")
    else:
        tail = "\n\nEnd of subagent result."
    return head + body + tail
