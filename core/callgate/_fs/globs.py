"""Glob patterns: the one dialect of ``glob``'s pattern, ``grep``'s file filter (search.md §3)
and ``[permissions]`` path rules (host.md §6). Public as `callgate.paths`.

``*`` is any run of characters except ``/`` (a leading ``.`` included), ``?`` one
character except ``/``, ``[...]`` / ``[!...]`` / ``[^...]`` classes never match
``/``, ``**`` as a whole segment is zero or more directories (inside a segment
it is ``*``), ``{a,b}`` alternates (nested, ``/`` allowed), ``\\`` escapes.
Matching is case-sensitive on every OS. For search, a pattern without ``/``
matches a file name at any depth; with ``/`` it matches the whole relative
path. A permission rule always matches the whole path, and ``dir/**`` also
covers ``dir`` itself (a rule about a tree covers its root).
"""

from __future__ import annotations

import re

import attrs

__all__ = ["META", "Glob", "GlobError", "compile_glob", "literal_prefix"]

META = frozenset("*?[]{}\\")
#: Deepest ``{...}`` nesting a pattern may use (real globs nest two or three levels; a
#: deeper one is refused before it can exhaust the translator's recursion).
MAX_BRACE_DEPTH = 16
_DOTDOT = re.compile(r"(?:^|[/{,])\.\.(?:$|[/},])")


class GlobError(ValueError):
    """The pattern cannot be used; the message says why in the model's terms."""


@attrs.frozen
class Glob:
    """A compiled glob: ``matches(rel)`` tests a ``/``-separated path relative to the base."""

    pattern: str
    regex: re.Pattern[str]
    by_name: bool
    prefix: tuple[str, ...]

    def matches(self, rel: str) -> bool:
        subject = rel.rpartition("/")[2] if self.by_name else rel
        return self.regex.fullmatch(subject) is not None


def compile_glob(pattern: str, *, by_name: bool | None = None, tree_root: bool = False) -> Glob:
    """Compile ``pattern`` or raise `GlobError` (unbalanced ``[``/``{``, a ``..`` segment).

    ``by_name``: match the file name alone (default: when the pattern has no ``/``).
    ``tree_root``: a pattern ending in ``/**`` also matches the directory before it.
    """
    if by_name is None:
        by_name = "/" not in pattern
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if _DOTDOT.search(pattern):
        raise GlobError("a '..' segment is not allowed; patterns stay below the base path")
    source, end = _sequence(pattern, 0, 0)
    if end != len(pattern):  # pragma: no cover - _sequence consumes everything at depth 0
        raise GlobError(f"unexpected {pattern[end]!r} at position {end}")
    if tree_root and pattern.endswith("/**") and source.endswith("/.*"):
        source = source[:-3] + "(?:/.*)?"
    try:
        regex = re.compile(source, re.DOTALL)
    except re.error as exc:
        raise GlobError(f"the pattern does not compile ({exc.msg})") from None
    return Glob(pattern, regex, by_name, literal_prefix(pattern))


def literal_prefix(pattern: str) -> tuple[str, ...]:
    """The leading directory segments of ``pattern`` that hold no glob syntax."""
    parts = pattern.split("/")
    out: list[str] = []
    for part in parts[:-1]:
        if not part or part == "." or any(c in META for c in part):
            break
        out.append(part)
    return tuple(out)


def _sequence(p: str, i: int, depth: int) -> tuple[str, int]:
    """Translate from ``i`` until the end, or (inside braces) until ``,`` or ``}``."""
    out: list[str] = []
    n = len(p)
    while i < n:
        c = p[i]
        if depth and c in ",}":
            break
        if c == "\\":
            if i + 1 < n:
                out.append(re.escape(p[i + 1]))
                i += 2
            else:
                out.append(re.escape("\\"))
                i += 1
        elif c == "*":
            j = i
            while j < n and p[j] == "*":
                j += 1
            starts = i == 0 or p[i - 1] == "/" or (depth > 0 and p[i - 1] in "{,")
            ends = j == n or p[j] == "/" or (depth > 0 and p[j] in ",}")
            if j - i == 2 and starts and ends:
                if j < n and p[j] == "/":
                    out.append("(?:[^/]+/)*")
                    j += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _char_class(p, i)
            out.append(cls)
        elif c == "{":
            if depth >= MAX_BRACE_DEPTH:
                raise GlobError(f"braces nest deeper than {MAX_BRACE_DEPTH} levels")
            alts: list[str] = []
            i += 1
            while True:
                alt, i = _sequence(p, i, depth + 1)
                alts.append(alt)
                if i >= n:
                    raise GlobError("unbalanced '{': a '{' has no matching '}'")
                if p[i] == "}":
                    i += 1
                    break
                i += 1  # the ','
            out.append("(?:" + "|".join(alts) + ")")
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out), i


_CLASS_ESCAPE = frozenset("\\]-[^&~|")


def _class_char(c: str) -> str:
    return "\\" + c if c in _CLASS_ESCAPE else c


def _char_class(p: str, i: int) -> tuple[str, int]:
    """Translate the class starting at ``p[i] == "["``; it never matches ``/``."""
    n = len(p)
    j = i + 1
    negate = j < n and p[j] in "!^"
    if negate:
        j += 1
    items: list[str] = []
    first = True
    while True:
        if j >= n:
            raise GlobError("unbalanced '[': a '[' has no matching ']'")
        c = p[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        if c == "\\" and j + 1 < n:
            c = p[j + 1]
            j += 1
        j += 1
        if j + 1 < n and p[j] == "-" and p[j + 1] != "]":
            hi = p[j + 1]
            j += 2
            if hi == "\\" and j < n:
                hi = p[j]
                j += 1
            if hi < c:
                raise GlobError(f"bad range {c}-{hi} in a [...] class")
            items.append(f"{_class_char(c)}-{_class_char(hi)}")
        else:
            items.append(_class_char(c))
    body = "".join(items)
    return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j
