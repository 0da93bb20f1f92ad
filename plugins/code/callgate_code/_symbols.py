"""Parsing one source file and listing its symbols, whatever its language."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
from tree_sitter import Node, Tree

from . import _lang_go, _lang_java, _lang_js, _lang_python, _lang_rust
from ._languages import Grammar, parser
from ._syntax import Symbol, first_error_line

BOM = b"\xef\xbb\xbf"

_EXTRACTORS: dict[str, Callable[[bytes, Node], Iterator[Symbol]]] = {
    "python": _lang_python.symbols,
    "go": _lang_go.symbols,
    "javascript": _lang_js.symbols,
    "typescript": _lang_js.symbols,
    "tsx": _lang_js.symbols,
    "rust": _lang_rust.symbols,
    "java": _lang_java.symbols,
}


@attrs.frozen
class Parsed:
    """A parsed file: its source (BOM removed), tree, and first syntax error line (if any)."""

    source: bytes
    tree: Tree = attrs.field(eq=False)
    error_line: int | None
    bom: bool

    def symbols(self, grammar: Grammar) -> list[Symbol]:
        found = list(_EXTRACTORS[grammar.label](self.source, self.tree.root_node))
        return sorted(found, key=lambda s: (s.line, s.name))


def parse(grammar: Grammar, data: bytes) -> Parsed | None:
    """Parse ``data``; ``None`` when the grammar is not installed."""
    p = parser(grammar)
    if p is None:
        return None
    bom = data.startswith(BOM)
    source = data[len(BOM):] if bom else data
    tree = p.parse(source)
    return Parsed(source, tree, first_error_line(tree.root_node), bom)
