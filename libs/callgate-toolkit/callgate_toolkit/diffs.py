"""What a file mutation changes: the preview an approver sees and the diff a tool shows
(files.md §7). Shared by every structured mutation (``files`` and ``delete_symbol``)."""

from __future__ import annotations

import difflib
from typing import Any, Literal

import attrs
from callgate.text import display, display_lines

#: A side of the trimmed change longer than this is not diffed (files.md §7).
DIFF_MAX_LINES = 2000
#: Tool outputs cut their diff at a line boundary after this many characters.
OUTPUT_DIFF_CHARS = 4096
CONTEXT = 3


@attrs.frozen
class ChangeDiff:
    """A unified diff of display-text lines and its ``+``/``-`` line counts."""

    text: str
    added: int
    removed: int

    def for_output(self, limit: int = OUTPUT_DIFF_CHARS) -> str:
        """The diff as tool outputs show it: cut at a line boundary after ``limit`` chars."""
        if len(self.text) <= limit:
            return self.text
        kept: list[str] = []
        size = 0
        for line in self.text.split("\n"):
            if size + len(line) + 1 > limit and kept:
                break
            kept.append(line)
            size += len(line) + 1
        kept.append(f"… (diff truncated; +{self.added}/-{self.removed} lines in total)")
        return "\n".join(kept)


@attrs.frozen
class FilePreview:
    """The change a mutating tool would make, computed by execution's own checks.

    ``new_bytes`` is byte-equal to what execution publishes if nothing changes
    meanwhile; ``base_version`` binds an approval to the version it was made on.
    """

    kind: Literal["create", "modify", "rename", "noop"]
    path: str
    destination: str | None = None
    old_bytes: bytes | None = None
    new_bytes: bytes | None = None
    diff: str | None = None
    binary: bool = False
    added: int = 0
    removed: int = 0
    base_version: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, compared block-wise at C speed."""
    n = min(len(a), len(b))
    i, step = 0, 4096
    while i < n:
        j = min(n, i + step)
        if a[i:j] != b[i:j]:
            lo, hi = i, j
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
        step = min(step * 2, 1 << 20)
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    la, lb = len(a), len(b)
    k, step = 0, 4096
    while k < limit:
        m = min(limit, k + step)
        if a[la - m:la - k] != b[lb - m:lb - k]:
            lo, hi = k, m
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        k = m
        step = min(step * 2, 1 << 20)
    return limit


def _range(start: int, length: int) -> str:
    begin = start + 1
    if length == 1:
        return str(begin)
    if length == 0:
        begin -= 1
    return f"{begin},{length}"


def change_diff(old: str | None, new: str, path: str, *,
                span: tuple[int, int, int] | None = None, first_line: int = 0) -> ChangeDiff:
    """The change from ``old`` to ``new`` (``None``: a create) as a unified diff.

    Display-text lines, shown as read_file shows them (undecodable bytes as U+FFFD,
    so the diff is valid UTF-8 whatever the file holds); common leading and trailing
    lines are trimmed before diffing (so a one-line edit of a 50 MB file costs one pass
    of comparisons); a remaining side over 2000 lines is summarized instead of diffed. ``span``
    (start, old end, new end), when the caller knows it, bounds the change so
    nothing outside it is compared at all. ``first_line`` numbers the hunks of
    texts that are a region (starting after that many lines) of a larger file.
    """
    if old is None:
        lines = display_lines(new)
        if len(lines) > DIFF_MAX_LINES:
            return _omitted(len(lines), 0)
        body = ["--- /dev/null", f"+++ b/{path}"]
        if lines:
            body.append(f"@@ -0,0 +{_range(0, len(lines))} @@")
            body.extend("+" + line for line in lines)
        return ChangeDiff(display("\n".join(body)), len(lines), 0)
    if span is not None:
        p = old.rfind("\n", 0, span[0]) + 1
        so = span[1]
    else:
        p = _common_prefix(old, new)
        p = old.rfind("\n", 0, p) + 1
        so = len(old) - _common_suffix(old, new, min(len(old), len(new)) - p)
    sn = len(new) - (len(old) - so)
    # the common tail must start a line in both texts; past its first character the two
    # agree, so one step to the next line start aligns both
    if so < len(old) and ((so > 0 and old[so - 1] != "\n") or (sn > 0 and new[sn - 1] != "\n")):
        nl = old.find("\n", so)
        so = len(old) if nl < 0 else nl + 1
        sn = len(new) - (len(old) - so)
    before_lines = old.count("\n", 0, p)
    a_mid = display_lines(old[p:so])
    b_mid = display_lines(new[p:sn])
    if len(a_mid) > DIFF_MAX_LINES or len(b_mid) > DIFF_MAX_LINES:
        return _omitted(len(b_mid), len(a_mid))
    ctx_start = p
    for _ in range(CONTEXT):
        if ctx_start == 0:
            break
        ctx_start = old.rfind("\n", 0, ctx_start - 1) + 1
    head = display_lines(old[ctx_start:p]) if p else []
    tail_end = so
    for _ in range(CONTEXT):
        if tail_end >= len(old):
            break
        nl = old.find("\n", tail_end)
        tail_end = len(old) if nl < 0 else nl + 1
    tail = display_lines(old[so:tail_end])
    a = head + a_mid + tail
    b = head + b_mid + tail
    shift = first_line + before_lines - len(head)
    out = [f"--- a/{path}", f"+++ b/{path}"]
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1] + shift, last[2] - first[1])} "
                   f"+{_range(first[3] + shift, last[4] - first[3])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend("-" + line for line in a[i1:i2])
                removed += i2 - i1
            if tag in ("replace", "insert"):
                out.extend("+" + line for line in b[j1:j2])
                added += j2 - j1
    if len(out) == 2:
        return ChangeDiff("", 0, 0)
    return ChangeDiff(display("\n".join(out)), added, removed)


def _omitted(added: int, removed: int) -> ChangeDiff:
    return ChangeDiff(f"(diff omitted: change too large to show; +{added}/-{removed} lines)",
                      added, removed)
