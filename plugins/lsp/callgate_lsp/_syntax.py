"""Where a symbol the model names is on a line: among the line's code tokens, from the syntax.

The model names a symbol by its line and its text. The text may occur on the line more than
once, and some occurrences are not code at all: ``msg = "make_circle"; make_circle()``,
``x = helper()  # helper is slow``. Taking the first occurrence asked the server about a
string or a comment (and answered for ``str``). So the file is parsed with its tree-sitter
grammar and only tokens of code count:

- a **candidate** is a token (a leaf of the syntax tree) whose text is the symbol, or a run
  of tokens spelling it exactly (``self.radius``, ``os.getcwd``, ``std::vector``; the query
  goes to the last named token of the run, the member);
- a token inside a comment or a string is not code, except inside an interpolation
  (``f"{x}"``, `` `${x}` ``, ``"$x"``), which is.

One candidate: its column. Several: the caller chooses by ``column`` (`Ambiguous` lists
them). None, though the text is there: `OnlyInText` (it occurs only in strings or comments).
A file whose grammar is not installed, or whose line breaks tree-sitter would count
differently (a lone ``\\r``), is matched by text: every whole-word occurrence is a candidate.

Grammars are individual wheels from PyPI (``tree-sitter-python``, ...), dependencies of this
package, imported when a file of their language is first queried.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Iterator

import attrs

from ._positions import split_lines

_WORD = re.compile(r"\w", re.UNICODE)


@attrs.frozen
class Grammar:
    """A tree-sitter grammar wheel: its module and the function that returns the language."""

    module: str
    function: str = "language"


_PYTHON = Grammar("tree_sitter_python")
_JS = Grammar("tree_sitter_javascript")
_TS = Grammar("tree_sitter_typescript", "language_typescript")
_TSX = Grammar("tree_sitter_typescript", "language_tsx")
_GO = Grammar("tree_sitter_go")
_RUST = Grammar("tree_sitter_rust")
_JAVA = Grammar("tree_sitter_java")
_C = Grammar("tree_sitter_c")
_CPP = Grammar("tree_sitter_cpp")
_BASH = Grammar("tree_sitter_bash")

#: File extension -> grammar (the extensions of the default servers that have one).
GRAMMARS: dict[str, Grammar] = {
    ".py": _PYTHON, ".pyi": _PYTHON,
    ".js": _JS, ".jsx": _JS, ".mjs": _JS, ".cjs": _JS,
    ".ts": _TS, ".mts": _TS, ".cts": _TS, ".tsx": _TSX,
    ".go": _GO, ".rs": _RUST, ".java": _JAVA,
    ".c": _C, ".h": _CPP,  # a header may be either: C++'s grammar reads C too
    ".cc": _CPP, ".cpp": _CPP, ".cxx": _CPP, ".c++": _CPP, ".hpp": _CPP, ".hh": _CPP,
    ".hxx": _CPP, ".h++": _CPP, ".ipp": _CPP,
    ".sh": _BASH, ".bash": _BASH,
}

#: Node types (or parts of them) that hold text, not code...
_TEXT_WORDS = ("comment", "string", "char_literal", "character_literal", "regex", "heredoc")
#: ... unless the token sits in one of these inside them.
_CODE_WORDS = ("interpolation", "substitution", "expansion")

_lock = threading.Lock()
_languages: dict[Grammar, object | None] = {}


@attrs.frozen
class Candidate:
    """One place the symbol is on the line: code-point columns (0-based, ``end`` exclusive),
    and ``column``, where the query goes (the member of a run like ``self.radius``)."""

    start: int
    end: int
    column: int


class Ambiguous(Exception):
    """The symbol is more than one token of code on the line."""

    def __init__(self, candidates: list[Candidate]) -> None:
        super().__init__(f"{len(candidates)} candidates")
        self.candidates = candidates


class OnlyInText(Exception):
    """The symbol occurs on the line, but only inside strings or comments."""


def _language(grammar: Grammar) -> object | None:
    with _lock:
        if grammar not in _languages:
            try:
                from tree_sitter import Language

                module = importlib.import_module(grammar.module)
                _languages[grammar] = Language(getattr(module, grammar.function)())
            except (ImportError, AttributeError, OSError, ValueError):
                _languages[grammar] = None
        return _languages[grammar]


def candidates(extension: str, text: str, row: int, symbol: str) -> list[Candidate]:
    """Every place ``symbol`` is code on 0-based line ``row`` of ``text`` (the document as the
    server has it, lines split the LSP way). `OnlyInText` when it occurs there only in
    strings or comments; an empty list when it does not occur at all. The answers for the
    last few hundred (file, line, symbol) are kept: a query repeated on an unchanged file
    parses nothing."""
    found = _cached(extension, text, row, symbol)
    if isinstance(found, OnlyInText):
        raise OnlyInText(symbol)
    return list(found)


@functools.lru_cache(maxsize=256)
def _cached(extension: str, text: str, row: int, symbol: str
            ) -> tuple[Candidate, ...] | OnlyInText:
    try:
        return tuple(_candidates(extension, text, row, symbol))
    except OnlyInText as exc:
        return exc


def _candidates(extension: str, text: str, row: int, symbol: str) -> list[Candidate]:
    line = _line(text, row)
    if symbol not in line:
        return []
    grammar = GRAMMARS.get(extension)
    language = _language(grammar) if grammar is not None else None
    if language is None or _lone_cr(text):
        return by_text(line, symbol)
    from tree_sitter import Parser

    data = text.encode("utf-8", "surrogatepass")
    tree = Parser(language).parse(data)
    raw = line.encode("utf-8", "surrogatepass")
    # walk only the smallest node that spans the line (a statement, not the whole file)
    top = tree.root_node.descendant_for_point_range((row, 0), (row, max(len(raw) - 1, 0)))
    tokens = list(_tokens_on(top or tree.root_node, row, len(raw)))
    if not tokens:
        return by_text(line, symbol)
    found = _single(tokens, raw, symbol) or _runs(tokens, raw, symbol)
    if found:
        return found
    outside = _outside_text(tokens, raw, symbol)
    words = [c for c in by_text(line, symbol) if c.start != c.end]
    whole = [c for c in words if _is_whole(line, c, symbol)]
    if any(c.start in outside for c in whole):  # code the grammar split oddly: by its text
        return [c for c in whole if c.start in outside]
    if whole or not outside:  # as a word, it is only in strings or comments
        raise OnlyInText(symbol)
    # only as a part of a longer token: as the model wrote it (the old rule)
    return [Candidate(outside[0], outside[0] + len(symbol), outside[0])]


def choose(found: list[Candidate], column: int | None) -> Candidate | None:
    """The candidate at 1-based ``column`` (any character of it), or the only one; `Ambiguous`
    when several remain; ``None`` when ``column`` matches none."""
    if column is not None:
        for candidate in found:
            if candidate.start <= column - 1 < max(candidate.end, candidate.start + 1):
                return candidate
        return None
    if len(found) > 1:
        raise Ambiguous(found)
    return found[0] if found else None


def by_text(line: str, symbol: str) -> list[Candidate]:
    """Every occurrence of ``symbol`` on ``line`` that stands as a whole word (not inside a
    longer identifier); when there is none, its first occurrence."""
    out = []
    at = line.find(symbol)
    first = at
    while at >= 0:
        before = line[at - 1] if at > 0 else ""
        after = line[at + len(symbol)] if at + len(symbol) < len(line) else ""
        if not (_WORD.match(symbol[0]) and before and _WORD.match(before)) and \
                not (_WORD.match(symbol[-1]) and after and _WORD.match(after)):
            out.append(Candidate(at, at + len(symbol), at))
        at = line.find(symbol, at + 1)
    if not out and first >= 0:
        out.append(Candidate(first, first + len(symbol), first))
    return out


def _is_whole(line: str, candidate: Candidate, symbol: str) -> bool:
    before = line[candidate.start - 1] if candidate.start > 0 else ""
    after = line[candidate.end] if candidate.end < len(line) else ""
    return not (_WORD.match(symbol[0]) and before and _WORD.match(before)) and \
        not (_WORD.match(symbol[-1]) and after and _WORD.match(after))


# --- the tree ----------------------------------------------------------------------------------


def _line(text: str, row: int) -> str:
    lines = split_lines(text)
    return lines[row] if 0 <= row < len(lines) else ""


def _lone_cr(text: str) -> bool:
    return "\r" in text.replace("\r\n", "")


def _tokens_on(root: object, row: int, width: int) -> Iterator[tuple[int, int, bool, bool]]:
    """The leaves on ``row`` (``width`` bytes long), in order, clipped to it: ``(start byte
    column, end byte column, named, is code)``. A leaf that starts on an earlier row (a
    multi-line string or comment) starts at 0."""
    stack = [root]
    while stack:
        node = stack.pop()
        start, end = node.start_point, node.end_point  # type: ignore[attr-defined]
        if end.row < row or start.row > row:
            continue
        if node.child_count == 0:  # type: ignore[attr-defined]
            first = start.column if start.row == row else 0
            stop = end.column if end.row == row else width
            if stop > first or start.row == row:
                yield first, stop, node.is_named, _is_code(node)  # type: ignore[attr-defined]
            continue
        stack.extend(reversed(node.children))  # type: ignore[attr-defined]


def _is_code(leaf: object) -> bool:
    node = leaf
    own = True
    while node is not None:
        if own and not node.is_named:  # type: ignore[attr-defined]
            own = False  # an anonymous token's type is its text ("string" in TypeScript)
            node = node.parent  # type: ignore[attr-defined]
            continue
        kind = node.type  # type: ignore[attr-defined]
        if any(word in kind for word in _CODE_WORDS):
            return True
        if any(word in kind for word in _TEXT_WORDS):
            return False
        own = False
        node = node.parent  # type: ignore[attr-defined]
    return True


def _text(raw: bytes, start: int, end: int) -> str:
    return raw[start:end].decode("utf-8", "replace")


def _column(raw: bytes, byte: int) -> int:
    return len(raw[:byte].decode("utf-8", "replace"))


def _single(tokens: list[tuple[int, int, bool, bool]], raw: bytes, symbol: str
            ) -> list[Candidate]:
    out = []
    for start, end, _named, code in tokens:
        if code and _text(raw, start, end) == symbol:
            column = _column(raw, start)
            out.append(Candidate(column, _column(raw, end), column))
    return out


def _runs(tokens: list[tuple[int, int, bool, bool]], raw: bytes, symbol: str
          ) -> list[Candidate]:
    """Runs of code tokens that spell ``symbol`` exactly (spacing included)."""
    want = symbol.encode("utf-8", "surrogatepass")
    out = []
    for i, (start, *_rest) in enumerate(tokens):
        if not raw.startswith(want, start):
            continue
        stop = start + len(want)
        member = None
        for t_start, t_end, named, code in tokens[i:]:
            if not code or t_end > stop:
                member = None
                break
            if named:
                member = t_start
            if t_end == stop:
                break
        else:
            member = None
        if member is not None:
            out.append(Candidate(_column(raw, start), _column(raw, stop), _column(raw, member)))
    return out


def _outside_text(tokens: list[tuple[int, int, bool, bool]], raw: bytes, symbol: str
                  ) -> list[int]:
    """The code-point columns where ``symbol`` occurs on the line outside every string or
    comment token."""
    want = symbol.encode("utf-8", "surrogatepass")
    out = []
    at = raw.find(want)
    while at >= 0:
        if not any(start <= at and at + len(want) <= end and not code
                   for start, end, _named, code in tokens):
            out.append(_column(raw, at))
        at = raw.find(want, at + 1)
    return out
