"""Which whole lines deleting a symbol removes (search.md §5, delete_symbol "Range").

From the first preamble line (a Go doc comment; Python decorators and the
``#`` lines directly above them) to the symbol's last line, plus a seam of
blank lines so the file keeps its spacing: after a range that follows a
blank line (or starts the file) the blank lines below it go too; a range
that ends the file takes the blank lines above it.
"""

from __future__ import annotations

import attrs
from tree_sitter import Node

from ._syntax import COMMENTS


class SharedLine(Exception):
    """Other code sits on one of the symbol's lines; ``line`` is 1-based."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


@attrs.frozen
class Lines:
    """A source split into lines that keep their terminators (``\\n`` or ``\\r\\n``)."""

    items: tuple[bytes, ...]

    @classmethod
    def of(cls, source: bytes) -> Lines:
        parts = source.split(b"\n")
        items = [p + b"\n" for p in parts[:-1]]
        if parts[-1]:
            items.append(parts[-1])
        return cls(tuple(items))

    def __len__(self) -> int:
        return len(self.items)

    def content(self, row: int) -> bytes:
        return self.items[row].rstrip(b"\r\n")

    def blank(self, row: int) -> bool:
        return not self.content(row).strip()

    def without(self, first: int, last: int) -> bytes:
        return b"".join(self.items[:first] + self.items[last + 1:])


def _comment_starts(root: Node) -> dict[int, Node]:
    """Comment nodes by the row they start on (the first one of each row)."""
    found: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in COMMENTS:
            row = node.start_point[0]
            if row not in found or node.start_byte < found[row].start_byte:
                found[row] = node
            continue
        stack.extend(node.children)
    return found


def _own_line(lines: Lines, node: Node) -> bool:
    """A comment alone on its line(s): only blanks before it and nothing after it."""
    row, col = node.start_point
    end_row, end_col = node.end_point
    return not lines.content(row)[:col].strip() and not lines.content(end_row)[end_col:].strip()


def preamble_start(lines: Lines, root: Node, first: int, language: str) -> int:
    """The first row of the comment block directly above row ``first`` (or ``first``)."""
    comments = _comment_starts(root)
    row = first - 1
    if language == "go" and row >= 0 and lines.content(row).rstrip().endswith(b"*/"):
        block = next((c for c in comments.values() if c.end_point[0] == row
                      and c.text is not None and c.text.startswith(b"/*")), None)
        if block is not None and _own_line(lines, block):
            return block.start_point[0]
        return first
    marker = b"#" if language == "python" else b"//"
    start = first
    while row >= 0:
        comment = comments.get(row)
        if comment is None or not comment.text or not comment.text.startswith(marker) or \
                not _own_line(lines, comment):
            break
        start = row
        row -= 1
    return start


def symbol_rows(lines: Lines, node: Node, trailing_comment: bytes) -> tuple[int, int]:
    """The rows a node covers; `SharedLine` when other code shares its first or last row."""
    first, col = node.start_point
    last, end_col = node.end_point
    if end_col == 0 and last > first:
        last -= 1
        end_col = len(lines.content(last))
    if lines.content(first)[:col].strip():
        raise SharedLine(first + 1)
    after = lines.content(last)[end_col:].strip()
    if after.startswith(b";"):
        after = after[1:].strip()
    if after and not after.startswith(trailing_comment) and \
            not (trailing_comment == b"//" and after.startswith(b"/*") and
                 after.endswith(b"*/")):
        raise SharedLine(last + 1)
    return first, last


def with_seam(lines: Lines, first: int, last: int) -> tuple[int, int]:
    """Widen ``[first, last]`` by the blank-line seam."""
    if first == 0 or lines.blank(first - 1):
        while last + 1 < len(lines) and lines.blank(last + 1):
            last += 1
    if last == len(lines) - 1:
        while first > 0 and lines.blank(first - 1):
            first -= 1
    return first, last
