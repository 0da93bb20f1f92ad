"""What every language's symbol extractor shares: the `Symbol` record and signature rules.

A signature is what a reader needs to recognise a definition on one line
(search.md §5): for functions, methods and types the header from the first
token that is not a decorator, annotation or comment up to the body; for
everything else the declaration's first line. Whitespace runs become one
space; over 160 characters the signature is cut with ``…``.
"""

from __future__ import annotations

import re

import attrs
from tree_sitter import Node

SIGNATURE_MAX = 160
HEADER_KINDS = frozenset({"func", "method", "class", "struct", "interface", "enum", "trait"})
COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
PREFIX_SKIP = COMMENTS | {"decorator", "annotation", "marker_annotation", "attribute_item"}
_SPACES = re.compile(r"\s+")


@attrs.frozen
class Symbol:
    """One indexed definition.

    ``node`` is what deleting the symbol removes (a decorated definition with
    its decorators, or a whole Go declaration when it holds only this spec);
    ``together`` names the other identifiers a Go spec declares with it.
    """

    kind: str
    name: str
    parent: str | None
    line: int
    signature: str
    node: Node = attrs.field(eq=False, repr=False)
    together: tuple[str, ...] = ()

    @property
    def qualified(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name


def text(src: bytes, node: Node | None) -> str:
    if node is None:
        return ""
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def one_line(value: str) -> str:
    """Collapse whitespace and cut to the signature limit."""
    value = _SPACES.sub(" ", value).strip()
    if len(value) > SIGNATURE_MAX:
        return value[:SIGNATURE_MAX] + "…"
    return value


def first_line(src: bytes, node: Node) -> str:
    """The first line of a declaration, trimmed (the signature of vars, consts, aliases)."""
    return one_line(text(src, node).split("\n", 1)[0])


def _first_token(node: Node) -> int:
    """Where a definition's header starts: its first child that is not a decorator,
    annotation or comment (Java ``modifiers`` are looked into)."""
    for child in node.children:
        if child.type in PREFIX_SKIP:
            continue
        if child.type == "modifiers":
            inner = [c for c in child.children if c.type not in PREFIX_SKIP]
            if not inner:
                continue
            return inner[0].start_byte
        return child.start_byte
    return node.start_byte


def _comments_within(node: Node, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.end_byte <= start or current.start_byte >= end:
            continue
        if current.type in COMMENTS:
            out.append((max(current.start_byte, start), min(current.end_byte, end)))
            continue
        stack.extend(current.children)
    return sorted(out)


def header(src: bytes, node: Node, body: Node | None, prefix: str = "") -> str:
    """The definition's header up to ``body`` (or its end), comments removed, on one line,
    without a trailing ``{``, ``:`` or ``;``."""
    start = _first_token(node)
    end = body.start_byte if body is not None else node.end_byte
    pieces, cursor = [], start
    for c_start, c_end in _comments_within(node, start, end):
        pieces.append(src[cursor:c_start])
        pieces.append(b" ")
        cursor = c_end
    pieces.append(src[cursor:end])
    value = _SPACES.sub(" ", b"".join(pieces).decode("utf-8", "replace")).strip()
    while value and value[-1] in "{:;":
        value = value[:-1].rstrip()
    return one_line(prefix + value)


def first_error_line(node: Node) -> int | None:
    """The 1-based line of the first syntax error (an ERROR or MISSING node), if any."""
    if not node.has_error:
        return None
    stack = [node]
    best: tuple[int, int] | None = None
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            point = (current.start_point[0], current.start_point[1])
            if best is None or point < best:
                best = point
            continue
        if current.has_error:
            stack.extend(current.children)
    return (best[0] if best else node.start_point[0]) + 1


def name_line(node: Node | None, fallback: Node) -> int:
    return (node or fallback).start_point[0] + 1
