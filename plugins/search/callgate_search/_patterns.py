"""grep's regex dialect: Python ``re`` syntax, minus what ripgrep cannot run (search.md §2).

Both engines must give the same answer, so constructs that only a
backtracking engine can run (look-around, backreferences, atomic groups,
possessive quantifiers, conditionals) are refused before anything is read,
and so is a newline (matching is per line). The parse also tells the Python
engine what it may speed up: a literal every match must contain, and whether
the pattern anchors to the string (``\\A``, ``\\Z``) and must run line by line.
"""

from __future__ import annotations

import re
import warnings
from re import _constants as sre  # the stdlib's own regex parser: the exact re dialect
from re import _parser as sre_parse
from typing import Any

import attrs

_NEWLINE = 10
_NEWLINE_TEXT = "a newline (\\n)"


@attrs.frozen
class PatternInfo:
    """What the Python engine needs to know about a valid pattern.

    ``required`` is a byte string every matching line contains (compare it with
    the file's bytes, lowered with ``bytes.lower()`` when ``folded``).
    """

    anchored_to_string: bool
    required: bytes | None
    folded: bool


# ASCII letters whose case-insensitive match includes a non-ASCII letter (ı, İ, ſ, K).
_UNSAFE_FOLD = frozenset("iskISK")


def pattern_problem(pattern: str) -> str | None:
    """Why grep will not run ``pattern`` (one sentence), or ``None`` when it is fine."""
    if "\n" in pattern:
        return f"pattern uses {_NEWLINE_TEXT}, which grep does not support (matching is per line)"
    if "\x00" in pattern:  # rg takes the pattern as an argument, which cannot hold NUL
        return ("pattern holds a NUL character, which grep does not support (files holding NUL "
                "are binary and never searched)")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parsed = sre_parse.parse(pattern)
            re.compile(pattern)
    except re.error as exc:
        return f"pattern is not a valid Python regular expression: {exc}"
    except (OverflowError, RecursionError, ValueError) as exc:
        return f"pattern is not a valid Python regular expression: {exc}"
    if any(issubclass(w.category, FutureWarning) for w in caught):
        return ("pattern uses a nested set or set operation inside [...] ([[, &&, --, ~~, ||), "
                "which grep does not support; escape the character")
    construct = _unsupported(list(parsed))
    if construct == _NEWLINE_TEXT:
        return f"pattern uses {construct}, which grep does not support (matching is per line)"
    if construct:
        return f"pattern uses {construct}, which grep does not support"
    return None


def analyse(pattern: str, ignore_case: bool) -> PatternInfo:
    """Facts about a pattern that `pattern_problem` accepted."""
    parsed = sre_parse.parse(pattern)
    folded = ignore_case or bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE)
    items = list(parsed)
    runs = _literal_runs(items)
    if folded:
        pieces = [piece for run in runs for piece in _fold_safe(run)]
        best = max(pieces, key=len, default="")
        required = best.lower().encode("ascii") if best else None
    else:
        best = max(runs, key=len, default="")
        required = best.encode("utf-8") if best and not _special(best) else None
    return PatternInfo(_has_string_anchor(items), required, folded)


def _special(text: str) -> bool:
    return "\ufffd" in text or "\ufeff" in text


def _fold_safe(run: str) -> list[str]:
    """The parts of a literal run whose case variants are exactly their ASCII ones."""
    out, current = [], []
    for ch in run:
        if ch.isascii() and ch not in _UNSAFE_FOLD:
            current.append(ch)
        else:
            out.append("".join(current))
            current = []
    out.append("".join(current))
    return [piece for piece in out if piece]


def _children(op: Any, av: Any) -> list[list[Any]]:
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return [list(av[2])]
    if op == sre.SUBPATTERN:
        return [list(av[3])]
    if op == sre.BRANCH:
        return [list(b) for b in av[1]]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [list(av[1])]
    if op == sre.ATOMIC_GROUP:
        return [list(av)]
    if op == sre.GROUPREF_EXISTS:
        return [list(b) for b in av[1:] if b is not None]
    return []


def _unsupported(items: list[Any]) -> str | None:
    for op, av in items:
        if op == sre.ASSERT:
            return "a look-behind (?<=...)" if av[0] < 0 else "a look-ahead (?=...)"
        if op == sre.ASSERT_NOT:
            return "a negative look-behind (?<!...)" if av[0] < 0 else \
                "a negative look-ahead (?!...)"
        if op == sre.GROUPREF:
            return "a backreference (\\1 or (?P=name))"
        if op == sre.GROUPREF_EXISTS:
            return "a conditional group (?(1)...)"
        if op == sre.ATOMIC_GROUP:
            return "an atomic group (?>...)"
        if op == sre.POSSESSIVE_REPEAT:
            return "a possessive quantifier (*+, ++, ?+ or }+)"
        if op == sre.LITERAL and av == _NEWLINE:
            return _NEWLINE_TEXT
        if op == sre.IN and any(o == sre.LITERAL and a == _NEWLINE for o, a in av):
            return _NEWLINE_TEXT
        for child in _children(op, av):
            found = _unsupported(child)
            if found:
                return found
    return None


def _has_string_anchor(items: list[Any]) -> bool:
    for op, av in items:
        if op == sre.AT and av in (sre.AT_BEGINNING_STRING, sre.AT_END_STRING):
            return True
        if any(_has_string_anchor(child) for child in _children(op, av)):
            return True
    return False


def _literal_runs(items: list[Any]) -> list[str]:
    """Runs of literal characters at the top level: every match contains each of them."""
    runs: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            runs.append("".join(run))
            run.clear()

    def visit(seq: list[Any]) -> None:
        for op, av in seq:
            if op == sre.LITERAL:
                run.append(chr(av))
            elif op == sre.SUBPATTERN and not av[1] and not av[2]:
                visit(list(av[3]))
            else:
                flush()

    visit(items)
    flush()
    return runs
