"""How edit_file and multi_edit find ``old_string`` (files.md §6.3).

Exact first (with CRLF adaptation of an LF-only ``old_string``), then fuzzy by
lines in four modes, the first mode with any match deciding: trailing
whitespace ignored; plus tab = 4 spaces in the indentation; then the same two
with read_file's ``  12→`` prefixes stripped. Leading indentation always has
to match: a fuzzy match never re-indents code it was not shown.

Line endings follow the file, line by line (issue 36): a line new_string keeps from
the matched text (the same line, as matching compares lines) keeps its bytes, its
terminator and trailing whitespace included; a line new_string brings in ends like
the line it replaces (an inserted line: like the matched line before it), unless
new_string spells a CRLF itself. So an edit of a file with mixed endings changes no
byte of a line it did not change.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from callgate.text import display, display_line, line_style, split_lines, to_crlf

PREFIX = re.compile(r"^ *\d+→")
ROW_MAX = 80
LIST_MAX = 5
MIN_CLOSEST = 3


class MatchFailure(Exception):
    """``FS_NO_MATCH`` / ``FS_NOT_UNIQUE`` with the message after the code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Edited:
    """The result of one edit: ``base`` with ``pieces`` ``(start, end, replacement)``
    replaced, how many places changed, and whether matching was fuzzy.

    The new text is only built when asked for (`text`): a one-line edit of a big
    ASCII file can splice its bytes (`splice`) and diff just the edited region.
    """

    def __init__(self, base: str, pieces: list[tuple[int, int, str]], count: int, fuzzy: bool,
                 text: str | None = None) -> None:
        self.base = base
        self.pieces = pieces
        self.count = count
        self.fuzzy = fuzzy
        self._text = text

    @property
    def text(self) -> str:
        if self._text is None:
            out, pos = [], 0
            for start, end, replacement in self.pieces:
                out.append(self.base[pos:start])
                out.append(replacement)
                pos = end
            out.append(self.base[pos:])
            self._text = "".join(out)
        return self._text

    def splice(self, data: bytes, offset: int, encode: Callable[[str], bytes]) -> bytes:
        """The new bytes from the old ones, for a file whose character ``i`` is byte
        ``offset + i`` (ASCII text): only the replacements are encoded."""
        out, pos = [], 0
        for start, end, replacement in self.pieces:
            out.append(data[pos:offset + start])
            out.append(encode(replacement))
            pos = offset + end
        out.append(data[pos:])
        return b"".join(out)

    def inserted(self) -> list[str]:
        """The text each replacement brings in: the replacement without what it shares,
        at its start and at its end, with the text it replaces (what an encoding check
        has to look at: ``"# Тест\\nx = 1"`` → ``"# Тест\\nx = 2"`` brings in ``"2"``)."""
        out = []
        for start, end, replacement in self.pieces:
            old = self.base[start:end]
            if replacement.isascii():
                continue
            head = _shared(old, replacement)
            rest_old, rest_new = old[head:], replacement[head:]
            tail = _shared(rest_old[::-1], rest_new[::-1])
            out.append(rest_new[: len(rest_new) - tail])
        return out

    def head(self, size: int) -> str | None:
        """The first ``size`` characters of the new text, or ``None`` if no replacement
        starts in them (the head is the old one)."""
        if not self.pieces or self.pieces[0][0] >= size:
            return None
        if self._text is not None:
            return self._text[:size]
        out, pos, length = [], 0, 0
        for start, end, replacement in self.pieces:
            if length >= size:
                break
            out.append(self.base[pos:start])
            out.append(replacement)
            length += start - pos + len(replacement)
            pos = end
        if length < size:
            out.append(self.base[pos:pos + size - length])
        return "".join(out)[:size]

    def region(self, context: int = 3) -> tuple[str, str, int]:
        """``(old, new, first line)`` of the edited lines plus ``context`` lines around."""
        base = self.base
        start = self.pieces[0][0]
        end = self.pieces[-1][1]
        p = base.rfind("\n", 0, start) + 1
        for _ in range(context):
            if p == 0:
                break
            p = base.rfind("\n", 0, p - 1) + 1
        q = end
        for _ in range(context + 1):
            nl = base.find("\n", q)
            q = len(base) if nl < 0 else nl + 1
            if q >= len(base):
                break
        out, pos = [], p
        for s, e, replacement in self.pieces:
            out.append(base[pos:s])
            out.append(replacement)
            pos = e
        out.append(base[pos:q])
        return base[p:q], "".join(out), base.count("\n", 0, p)


def _shared(a: str, b: str) -> int:
    """Length of the common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@attrs.frozen
class _Line:
    start: int
    end: int          # after the terminator
    term: int         # terminator length: 2 (CRLF), 1 (LF) or 0
    raw: str          # without terminator, "\r" kept if it is not part of CRLF


def row(text: str) -> str:
    """A line as error text: whitespace runs collapsed, trimmed, at most 80 chars."""
    out = " ".join(display(text).split())
    return out if len(out) <= ROW_MAX else out[: ROW_MAX - 1] + "…"


def _lines(text: str) -> list[_Line]:
    out = []
    pos = 0
    for line in split_lines(text):
        end = pos + len(line)
        term = 2 if line.endswith("\r\n") else 1 if line.endswith("\n") else 0
        out.append(_Line(pos, end, term, line[: len(line) - term]))
        pos = end
    return out


def _norm_a(raw: str) -> str:
    return raw.rstrip(" \t\r")


def _norm_b(raw: str) -> str:
    s = raw.rstrip(" \t\r")
    body = s.lstrip(" \t")
    return s[: len(s) - len(body)].replace("\t", "    ") + body


@attrs.frozen
class _Item:
    """One line of old_string, or a maximal run of its blank lines."""

    norm: str
    blank: bool
    ends_nl: bool


def _items(lines: Sequence[str], norm: object) -> list[_Item]:
    out: list[_Item] = []
    for line in lines:
        ends_nl = line.endswith("\n")
        n = norm(line[:-1] if ends_nl else line)  # type: ignore[operator]
        if n == "":
            if out and out[-1].blank:
                out[-1] = _Item("", True, ends_nl)
            else:
                out.append(_Item("", True, ends_nl))
        else:
            out.append(_Item(n, False, ends_nl))
    return out


def _strip_prefixes(text: str) -> str | None:
    """``text`` without read_file prefixes, or None unless every line has one."""
    lines = split_lines(text)
    if not lines or not all(PREFIX.match(line) for line in lines):
        return None
    return "".join(PREFIX.sub("", line, count=1) for line in lines)


class _Fuzzy:
    """One fuzzy search of ``old`` over the content lines in one normalization."""

    def __init__(self, content: list[_Line], old_lines: list[str], norm: object) -> None:
        self.content = content
        self.norm = norm
        self.items = _items(old_lines, norm)
        self._norms: dict[int, str] = {}

    def _n(self, j: int) -> str:
        got = self._norms.get(j)
        if got is None:
            got = self._norms[j] = self.norm(self.content[j].raw)  # type: ignore[operator]
        return got

    def _match_at(self, i: int) -> int | None:
        c, n, j = self.content, len(self.content), i
        for item in self.items:
            if item.blank:
                if j >= n or self._n(j) != "":
                    return None
                if j == i and i > 0 and self._n(i - 1) == "":
                    return None  # a blank run matches a whole run of blank lines
                while j < n and self._n(j) == "":
                    j += 1
                if item.ends_nl and c[j - 1].term == 0:
                    return None
            else:
                if j >= n or self._n(j) != item.norm:
                    return None
                if item.ends_nl and c[j].term == 0:
                    return None
                j += 1
        return j

    def matches(self, candidates: Sequence[int]) -> list[tuple[int, int]]:
        """Non-overlapping matches, tried at the ``candidates`` (lines holding the first
        non-blank line of old_string; a leading blank run extends a start backwards)."""
        out: list[tuple[int, int]] = []
        lead_blank = bool(self.items) and self.items[0].blank
        next_free = 0
        for s in candidates:
            i = s
            if lead_blank and self._n(s) != "":
                while i > 0 and self._n(i - 1) == "":
                    i -= 1
                if i == s:
                    continue
            if i < next_free:
                continue
            j = self._match_at(i)
            if j is not None and j > i:
                out.append((i, j))
                next_free = j
        return out


def _candidates(content: list[_Line], text: str, core: str) -> list[int]:
    """Content lines that contain ``core`` (the stripped first line of old_string)."""
    if not core:
        return list(range(len(content)))
    starts = [ln.start for ln in content]
    out: list[int] = []
    pos = text.find(core)
    while pos >= 0:
        k = bisect_right(starts, pos) - 1
        if not out or out[-1] != k:
            out.append(k)
        pos = text.find(core, content[k].end)
    return out


def _tabs_for_spaces(new: str) -> str:
    out = []
    for line in split_lines(new):
        body = line.lstrip(" ")
        lead = len(line) - len(body)
        out.append("\t" * (lead // 4) + " " * (lead % 4) + body)
    return "".join(out)


def _indent(raw: str) -> str:
    return raw[: len(raw) - len(raw.lstrip(" \t"))]


def apply_edit(text: str, old: str, new: str, replace_all: bool, path: str) -> Edited:
    """Replace ``old`` with ``new`` in ``text`` per §6.3, or raise `MatchFailure`."""
    o, n = old, new
    i = text.find(old)
    if i < 0 and "\r\n" in text:
        o_crlf = to_crlf(old)
        if o_crlf != old:
            i = text.find(o_crlf)
            if i >= 0:
                o, n = o_crlf, to_crlf(new)
    if i >= 0:
        second = text.find(o, i + len(o))
        if second < 0:
            return Edited(text, [(i, i + len(o), _exact_endings(text, i, i + len(o), o, n))],
                          1, False)
        spans = _exact_spans(text, o)
        if not replace_all:
            raise _not_unique(text, spans, path)
        return Edited(text, [(a, b, _exact_endings(text, a, b, o, n)) for a, b in spans],
                      len(spans), False)
    return _fuzzy_edit(text, old, new, replace_all, path)


def _ending_at(text: str, pos: int) -> str | None:
    """The terminator of the line holding ``pos`` (``\r\n`` or ``\n``), else of the
    nearest line before it that has one; ``None`` in a text without a newline."""
    nl = text.find("\n", pos)
    if nl < 0:
        nl = text.rfind("\n", 0, pos)
    if nl < 0:
        return None
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _bare_lf(text: str) -> bool:
    """Whether ``text`` has a ``\n`` that is not part of a CRLF."""
    return text.count("\n") != text.count("\r\n")


def _exact_endings(text: str, start: int, end: int, o: str, n: str) -> str:
    """new_string for an exact match at ``start:end``: its bare LFs end lines the way the
    matched text does (a match within one line: the way that line ends)."""
    if not _bare_lf(n):
        return n
    if "\n" in o:
        if _bare_lf(o):
            return n  # the matched lines end in LF, as new_string's do (or old_string mixes)
        return to_crlf(n)
    return to_crlf(n) if _ending_at(text, start) == "\r\n" else n


def _exact_spans(text: str, o: str) -> list[tuple[int, int]]:
    spans, pos = [], text.find(o)
    while pos >= 0:
        spans.append((pos, pos + len(o)))
        pos = text.find(o, pos + len(o))
    return spans


def _fuzzy_edit(text: str, old: str, new: str, replace_all: bool, path: str) -> Edited:
    content = _lines(text)
    stripped_old = _strip_prefixes(old)
    stripped_new = _strip_prefixes(new) if stripped_old is not None else None
    modes: list[tuple[str, object, str, str]] = [("a", _norm_a, old, new),
                                                  ("b", _norm_b, old, new)]
    if stripped_old is not None:
        n_used = stripped_new if stripped_new is not None else new
        modes += [("c", _norm_a, stripped_old, n_used), ("d", _norm_b, stripped_old, n_used)]
    for mode, norm, o, n in modes:
        o_lines = split_lines(o)
        first = next((ln for ln in o_lines if _norm_a(ln.rstrip("\n")).strip()), None)
        core = first.strip() if first is not None else ""
        if core and core not in text:
            continue
        search = _Fuzzy(content, o_lines, norm)
        found = search.matches(_candidates(content, text, core) if core else
                               range(len(content)))
        if not found:
            continue
        if len(found) > 1 and not replace_all:
            spans = [(content[i].start, content[j - 1].end) for i, j in found]
            raise _not_unique(text, spans, path, [(i, j) for i, j in found])
        last_nl = o.endswith("\n")
        pieces = []
        for i, j in found:
            start = content[i].start
            end = content[j - 1].end if last_nl else content[j - 1].end - content[j - 1].term
            replacement = n
            if mode in ("b", "d") and _adapt_tabs(content[i:j], o_lines):
                replacement = _tabs_for_spaces(replacement)
            pieces.append((start, end, _fit(text, content, i, text[start:end], replacement,
                                            norm)))
        return Edited(text, pieces, len(found), True)
    raise _no_match(text, content, old, path)


def _term(content: list[_Line], k: int) -> str:
    """How content line ``k`` ends; a last line without a newline ends like the nearest
    line before it that has one (else LF)."""
    while k >= 0:
        term = content[k].term
        if term:
            return "\r\n" if term == 2 else "\n"
        k -= 1
    return "\n"


def _split_term(line: str) -> tuple[str, str]:
    """``(body, terminator)`` of a line from `split_lines`."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith("\n"):
        return line[:-1], "\n"
    return line, ""


def _fit(text: str, content: list[_Line], first: int, region: str, new: str,
         norm: object) -> str:
    """The replacement of the matched lines ``region`` (content lines from ``first`` on) by
    ``new``, line by line: a line of ``new`` equal to a matched line (as ``norm`` compares
    them) is that line's own text; any other line ends as the line it replaces does (an
    inserted one as the matched line before it), unless it spells a CRLF itself."""
    old_lines = split_lines(region)
    new_lines = split_lines(new)
    old_keys = [norm(_split_term(line)[0]) for line in old_lines]  # type: ignore[operator]
    new_keys = [norm(_split_term(line)[0]) for line in new_lines]  # type: ignore[operator]
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for k in range(b1 - b0):
            body, term = _split_term(new_lines[b0 + k])
            if tag == "equal":
                old_body, old_term = _split_term(old_lines[a0 + k])
                # the matched line as it is; its terminator too, unless new_string ends
                # here without one (or the match left the terminator out: the file's)
                out.append(old_body + ((old_term or _term(content, first + a0 + k))
                                       if term else ""))
                continue
            if term == "\n":
                # a replacing line: like the line it replaces; an inserted one: like the
                # line before it (at the start: the one after)
                ref = a0 + min(k, a1 - a0 - 1) if tag == "replace" else max(a0 - 1, 0)
                term = _term(content, first + min(ref, len(old_lines) - 1))
            out.append(body + term)
    return "".join(out)


def _adapt_tabs(matched: Sequence[_Line], o_lines: Sequence[str]) -> bool:
    content_ws = [_indent(ln.raw) for ln in matched if ln.raw.strip()]
    old_ws = [_indent(line.rstrip("\n")) for line in o_lines if line.strip()]
    content_ws = [w for w in content_ws if w]
    old_ws = [w for w in old_ws if w]
    return bool(content_ws) and bool(old_ws) and all(set(w) == {"\t"} for w in content_ws) \
        and all(set(w) == {" "} for w in old_ws)


def _not_unique(text: str, spans: list[tuple[int, int]], path: str,
                line_spans: list[tuple[int, int]] | None = None) -> MatchFailure:
    content = _lines(text)
    starts = [ln.start for ln in content]
    shown = []
    for k, (start, end) in enumerate(spans[:LIST_MAX]):
        if line_spans is not None:
            first, after = line_spans[k][0], line_spans[k][1]
        else:
            first = bisect_right(starts, start) - 1
            after = bisect_right(starts, max(start, end - 1) if end > start else start)
        then = f'then "{row(content[after].raw)}"' if after < len(content) else \
            "then end of file"
        shown.append(f"line {first + 1} ({then})")
    listing = ", ".join(shown) + (", …" if len(spans) > LIST_MAX else "")
    return MatchFailure("FS_NOT_UNIQUE", f"old_string matches {len(spans)} places in {path}: "
                        f"{listing}; include nearby distinctive lines, or set replace_all=true "
                        "to change every match")


def _closest_key(line: str) -> str:
    return line.strip().replace("\t", "    ")


def _closest(content: list[_Line], first: str) -> tuple[int, int]:
    """§6.3 closest line for old_string's first non-blank line: ``(line index, common
    prefix length)``, earliest on ties; ``(-1, 0)`` if none."""
    want = _closest_key(first)
    best, best_len = -1, 0
    if want:
        for k, line in enumerate(content):
            have = _closest_key(line.raw)
            if not have or have[0] != want[0]:
                continue
            m = 0
            limit = min(len(have), len(want))
            while m < limit and have[m] == want[m]:
                m += 1
            if m > best_len:
                best, best_len = k, m
    return best, best_len


def _no_match(text: str, content: list[_Line], old: str, path: str) -> MatchFailure:
    o = _strip_prefixes(old) or old
    first = display_line(next((ln for ln in split_lines(o) if ln.strip()), ""))
    best, best_len = _closest(content, first)
    shown = best >= 0 and best_len >= MIN_CLOSEST
    best, detail = _differs(content, o, best if shown else _similar(content, first))
    shown = shown or (best >= 0 and detail is not None)
    where = f' (closest line {best + 1}: "{row(content[best].raw)}")' if shown else ""
    message = (f"old_string was not found in {path}{where}; re-read that region and copy the "
               "text exactly, indentation included")
    if detail:
        message += "\n" + detail
    if line_style(text) != "lf":
        message += ("\nthe file uses CRLF; LF-only old_string is already adapted, so the text "
                    "differs")
    return MatchFailure("FS_NO_MATCH", message)


# --- what differs: the closest place compared with old_string, invisible characters named --

#: A line more similar than this to old_string's first line (difflib ratio) is a close miss
#: when they share no 3-character prefix (``x\u00a0= 1`` for ``x = 1``).
SIMILAR = 0.75
SIMILAR_LINES = 20000


def _similar(content: list[_Line], first: str) -> int:
    """The content line most like ``first`` (at least `SIMILAR`), or -1."""
    want = _closest_key(first)
    if len(want) < MIN_CLOSEST:
        return -1
    sm = difflib.SequenceMatcher(None, autojunk=False)
    sm.set_seq2(want)
    best, best_ratio = -1, SIMILAR
    for k, line in enumerate(content[:SIMILAR_LINES]):
        have = _closest_key(line.raw)
        if not have or abs(len(have) - len(want)) > len(want) // 4 + 2:
            continue
        sm.set_seq1(have)
        if sm.real_quick_ratio() <= best_ratio or sm.quick_ratio() <= best_ratio:
            continue
        ratio = sm.ratio()
        if ratio > best_ratio:
            best, best_ratio = k, ratio
    return best

#: Alignments tried when several lines equal old_string's first line.
ALIGN_MAX = 50
SHOW_AROUND = 24


def _differs(content: list[_Line], old: str, closest: int) -> tuple[int, str | None]:
    """The best alignment of ``old`` near the closest line, and what differs there.

    Every line that equals old_string's first non-blank line (as fuzzy matching
    compares lines) is a candidate start, else the closest line alone (``-1``: none);
    the one whose lines match longest wins (earliest on ties). Returns ``(start,
    explanation)``; the explanation is ``None`` when the difference is plain to see in
    the hint already (visible characters on the first line).
    """
    o_lines = split_lines(old)
    lead = next((i for i, ln in enumerate(o_lines) if ln.strip()), None)
    if lead is None:
        return closest, None
    o_lines = o_lines[lead:]
    key = _norm_b(display_line(o_lines[0]))
    starts = [k for k, ln in enumerate(content) if _norm_b(ln.raw) == key][:ALIGN_MAX] or \
        ([closest] if closest >= 0 else [])
    best: tuple[int, int, str | None] = (closest, -1, None)
    for k in starts:
        matched, why = _walk(content, o_lines, k)
        if matched > best[1]:
            best = (k, matched, why)
    return best[0], best[2]


def _walk(content: list[_Line], o_lines: list[str], k: int) -> tuple[int, str | None]:
    """Pair old_string's lines with the content lines from ``k`` on, as fuzzy matching
    does; ``(lines that matched, what differs at the first that did not)``."""
    j = k
    for i, o_line in enumerate(o_lines):
        o_raw = display_line(o_line)
        if j >= len(content):
            left = len(o_lines) - i
            return i, (f"what differs: old_string goes on for {left} more line"
                       f"{'s' if left > 1 else ''} after line {len(content)}, the last line of "
                       "the file")
        c = content[j]
        if _norm_b(o_raw) == "" and _norm_b(c.raw) == "":
            while j + 1 < len(content) and _norm_b(content[j + 1].raw) == "":
                j += 1  # a blank run matches a whole run of blank lines
            c = content[j]
        elif _norm_b(o_raw) == "":
            return i, (f"what differs: old_string has a blank line where line {j + 1} of the "
                       f'file reads "{row(c.raw)}"')
        elif _norm_b(c.raw) == "":
            return i, (f"what differs: line {j + 1} of the file is blank where old_string has "
                       f'"{row(o_raw)}"')
        elif _norm_b(o_raw) != _norm_b(c.raw):
            c_raw = c.raw[:-1] if c.raw.endswith("\r") else c.raw
            return i, _line_difference(o_raw, c_raw, j + 1, obvious=i == 0)
        if o_line.endswith("\n") and c.term == 0:
            return i, (f"what differs: the file has no newline at its end (after line {j + 1}),"
                       " but old_string ends with one; leave the final newline out of "
                       "old_string")
        j += 1
    return len(o_lines), None


def _line_difference(o: str, c: str, n: int, *, obvious: bool,
                     who: str = "old_string") -> str | None:
    """How line ``n`` of the file (``c``) differs from ``who``'s line ``o``.

    Trailing whitespace counts only when the lines are otherwise equal (fuzzy matching
    ignores it; a delete_range anchor must match it). ``obvious``: the difference
    is on a line the hint already shows, so plain visible characters need no detail.
    """
    o_ind, c_ind = _indent(o), _indent(c)
    if o.strip(" \t") == c.strip(" \t"):
        if o_ind != c_ind:
            return (f"what differs: line {n} is indented with {_whitespace(c_ind)}, "
                    f"{who} with {_whitespace(o_ind)}")
        o_end, c_end = o[len(o.rstrip(" \t")):], c[len(c.rstrip(" \t")):]
        if o_end != c_end and not c_end:
            return (f"what differs: line {n} has no trailing whitespace, but {who} ends with "
                    f"{_whitespace(o_end)}")
        if o_end != c_end:
            return (f"what differs: line {n} ends with {_whitespace(c_end)}, {who} with "
                    f"{_whitespace(o_end) if o_end else 'none'}")
        return None
    # compared after the indentation: old_string's first line may start mid-line
    co, cc = len(o_ind), len(c_ind)
    d = _shared(o[co:], c[cc:])
    have = c[cc + d] if cc + d < len(c) else None
    want = o[co + d] if co + d < len(o) else None
    if obvious and _plain(have) and _plain(want) and row(c) != row(o):
        return None
    pad = " " * max(0, len(who) - len("file"))
    return (f"what differs: line {n}, column {cc + d + 1}: the file has {_char(have)} where "
            f"{who} has {_char(want)}\n  file:{pad} {_visible(c, cc + d)}\n"
            f"  {who}: {_visible(o, co + d)}")


def line_hint(lines: Sequence[str], wanted: str, who: str) -> str | None:
    """For a whole line ``wanted`` that matches no line of ``lines`` (with terminators):
    what differs on the line most like it, or ``None`` if none is close."""
    target = wanted.strip()
    shown = [display_line(line) for line in lines]
    k = next((i for i, line in enumerate(shown) if line.strip() == target), -1)
    if k < 0:
        k = _similar(_lines("".join(lines)), wanted)
    if k < 0:
        return None
    return _line_difference(wanted, shown[k], k + 1, obvious=False, who=who)


def _plain(ch: str | None) -> bool:
    return ch is not None and ch.isascii() and ch.isprintable() and not ch.isspace()


def _whitespace(ws: str) -> str:
    """``"\t\t  "`` as ``2 tabs + 2 spaces``."""
    if not ws:
        return "no indentation"
    if set(ws) - {" ", "\t"}:
        return " + ".join(_char(ch) for ch in ws)
    runs: list[list[Any]] = []
    for ch in ws:
        if runs and runs[-1][0] == ch:
            runs[-1][1] += 1
        else:
            runs.append([ch, 1])
    names = {" ": ("space", "spaces"), "\t": ("tab", "tabs")}
    return " + ".join(f"{n} {names[ch][n != 1]}" for ch, n in runs)


_NAMED = {" ": "a space", "\t": "a tab", "\r": "a carriage return (\\r)",
          "\ufffd": "U+FFFD (read_file shows it for bytes it cannot decode; it matches no byte "
          "of the file: anchor old_string on the text around it)"}


def _char(ch: str | None) -> str:
    """A character named so that it cannot be mistaken for another."""
    if ch is None:
        return "the end of the line"
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return (f"the byte \\x{code - 0xDC00:02x}, which is not valid in its encoding "
                "(read_file shows it as U+FFFD)")
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} (a lone surrogate)"
    if ch == '"':
        return "a double quote (\")"
    if ch.isascii() and ch.isprintable():
        return f'"{ch}"'
    name = unicodedata.name(ch, "")
    shown = f' "{ch}"' if ch.isprintable() and not ch.isspace() else ""
    return f"U+{code:04X}{' ' + name if name else ''}{shown}"


def _visible(line: str, at: int) -> str:
    """Part of ``line`` around column ``at`` in quotes, invisible characters escaped."""
    start = max(0, at - SHOW_AROUND)
    end = min(len(line), at + SHOW_AROUND)
    out = ["…" if start else ""]
    for ch in line[start:end]:
        code = ord(ch)
        if ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF or not (ch.isprintable() or ch == " ") or \
                (ch.isspace() and ch != " ") or unicodedata.category(ch) == "Cf":
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append("…" if end < len(line) else "")
    return '"' + "".join(out) + '"'
