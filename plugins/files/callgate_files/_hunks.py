"""Where the chunks of an ``*** Update File`` go in a file, and what they replace there.

Codex's rules (codex-rs/apply-patch: ``seek_sequence.rs`` and the update code), so a
patch lands where Codex would land it:

- a chunk's ``@@`` line is found first (at or after the previous chunk), then its old
  lines at or after that; each search tries four ways, strictest first, and the first
  way with a match wins, at its earliest place (`FUZZ`): exactly, ignoring trailing
  whitespace, ignoring surrounding whitespace, and with typographic punctuation (dashes,
  quotes, odd spaces) read as ASCII;
- a chunk marked ``*** End of File`` must end the file;
- old lines ending in an empty line that are not found are tried without it (it stood for
  the file's final newline);
- a chunk with no old lines appends its lines at the end of the file;
- context lines stay exactly as the file has them (text and ending); new lines take the
  file's first line ending; an updated file always ends with a line ending.

What comes out are character-offset pieces of the file's text, the form ``edit_file``'s
`Edited` takes, so the update is checked, encoded and diffed by the edit family's helpers.
"""

from __future__ import annotations

import difflib
import itertools
from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from ._v4a import WHITESPACE, Chunk

#: The ways a search tries, strictest first (Codex's seek_sequence passes).
FUZZ = ("exact", "trailing whitespace ignored", "surrounding whitespace ignored",
        "typographic punctuation read as ASCII")

_ASCII = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f"
                    "\u205f\u3000", " "),
})


def _plain(text: str) -> str:
    return text.strip(WHITESPACE).translate(_ASCII)


_NORMS: tuple[Callable[[str], str] | None, ...] = (
    None, lambda s: s.rstrip(WHITESPACE), lambda s: s.strip(WHITESPACE), _plain)
#: how many places the closest-region search looks at, at most
CLOSEST_BUDGET = 20_000
SIMILAR = 0.6


class FileLines:
    """A text as lines without their endings, found by position in the text on demand.

    ``ending`` is the file's first line ending (``"\\n"`` when it has none): the ending
    new lines get. Built for big files: one ``split``, the exact search by ``list.index``,
    line offsets summed in C only where a piece starts or ends, and the loosened views
    built only when the exact search finds nothing.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # ``parts`` and ``sep``: the text is "sep".join(parts); a line's text is without its
        # ending ("\n" and one "\r" before it)
        if "\r" not in text:
            parts, sep = text.split("\n"), 1
            texts = parts[:-1]
        elif text.count("\n") == text.count("\r\n"):  # CRLF only
            parts, sep = text.split("\r\n"), 2
            texts = parts[:-1]
        else:
            parts, sep = text.split("\n"), 1
            texts = [p[:-1] if p.endswith("\r") else p for p in parts[:-1]]
        if parts[-1]:
            texts.append(parts[-1])  # the unterminated last line, as it is
        self._parts, self._sep = parts, sep
        self.texts = texts
        first = text.find("\n")
        self.ending = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
        self._views: dict[int, list[str]] = {0: texts}
        self._index: dict[int, dict[str, list[int]]] = {}
        self._at = (0, 0)  # a line whose offset is known, and that offset

    def __len__(self) -> int:
        return len(self.texts)

    def offset(self, line: int) -> int:
        """Where line ``line`` starts in the text (the text's length past the last line);
        cheapest when asked in ascending order."""
        if line >= len(self.texts):
            return len(self.text)
        known, pos = self._at
        if line < known:
            known, pos = 0, 0
        pos += sum(map(len, self._parts[known:line])) + (line - known) * self._sep
        self._at = (line, pos)
        return pos

    def view(self, level: int) -> list[str]:
        view = self._views.get(level)
        if view is None:
            norm = _NORMS[level]
            assert norm is not None
            view = self._views[level] = [norm(t) for t in self.texts]
        return view

    def where(self, level: int) -> dict[str, list[int]]:
        """Each line of ``view(level)`` → the indexes it is at, ascending."""
        index = self._index.get(level)
        if index is None:
            index = {}
            for i, text in enumerate(self.view(level)):
                index.setdefault(text, []).append(i)
            self._index[level] = index
        return index

    def seek(self, pattern: Sequence[str], start: int, end_of_file: bool
             ) -> tuple[int, int] | None:
        """``(line, fuzz level)`` where ``pattern`` is at or after ``start`` (only at the
        very end with ``end_of_file``), or ``None``."""
        if not pattern:
            return start, 0
        m, n = len(pattern), len(self.texts)
        if m > n:
            return None
        lo = n - m if end_of_file else start
        for level, norm in enumerate(_NORMS):
            view = self.view(level)
            want = list(pattern) if norm is None else [norm(p) for p in pattern]
            i = lo
            while i <= n - m:
                try:
                    i = view.index(want[0], i, n - m + 1)
                except ValueError:
                    break
                if view[i:i + m] == want:
                    return i, level
                i += 1
        return None

    def closest(self, pattern: Sequence[str], after: int) -> int | None:
        """The line where the stretch most like ``pattern`` starts: the most lines equal
        when read loosely, nearest ``after`` on ties; else the line most like its first
        non-blank line; ``None`` when nothing is alike."""
        view, index = self.view(3), self.where(3)
        want = [_plain(p) for p in pattern]
        votes: Counter[int] = Counter()
        budget = CLOSEST_BUDGET
        for j, text in enumerate(want):
            if not text:
                continue
            for i in index.get(text, ()):
                votes[i - j] += 1
                budget -= 1
                if budget <= 0:
                    break
            if budget <= 0:
                break
        if votes:
            return max(votes, key=lambda s: (votes[s], -abs(s - after), -s))
        first = next(((j, t) for j, t in enumerate(want) if t), None)
        if first is None:
            return None
        j, text = first
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(text)
        best: tuple[float, int, int] | None = None  # ratio, -distance to after, start
        for i, line in enumerate(view[:CLOSEST_BUDGET]):
            if not line or abs(len(line) - len(text)) > len(text) // 2 + 2:
                continue
            matcher.set_seq1(line)
            floor = best[0] if best is not None else SIMILAR
            if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
                continue
            ratio = matcher.ratio()
            if ratio < SIMILAR:
                continue
            candidate = (ratio, -abs(i - j - after), i - j)
            if best is None or candidate[:2] > best[:2]:
                best = candidate
        return best[2] if best is not None else None


class Miss(Exception):
    """Chunk ``chunk`` (0-based) was not found: its ``@@`` line (``what="context"``) or
    its old lines (``"lines"``), searched from line ``after``; or it overlaps the chunk
    before (``"overlap"``)."""

    def __init__(self, chunk: int, what: str, after: int) -> None:
        super().__init__(f"chunk {chunk + 1}: {what}")
        self.chunk = chunk
        self.what = what
        self.after = after


@attrs.frozen
class Located:
    """The chunks placed: character-offset ``pieces`` of the text, sorted and apart,
    and the loosest fuzz level a search needed (0: every match exact)."""

    pieces: list[tuple[int, int, str]]
    fuzz: int


def locate(lines: FileLines, chunks: Sequence[Chunk]) -> Located:
    """Place every chunk (Codex's order and rules), or raise `Miss` for the first that
    does not fit."""
    replacements: list[tuple[int, int, tuple[str, ...], int]] = []  # start, length, new, chunk
    at = 0
    fuzz = 0
    for k, chunk in enumerate(chunks):
        if chunk.context is not None:
            found = lines.seek([chunk.context], at, False)
            if found is None:
                raise Miss(k, "context", at)
            at, fuzz = found[0] + 1, max(fuzz, found[1])
        if not chunk.old:
            replacements.append((len(lines), 0, chunk.new, k))
            continue
        old, new = chunk.old, chunk.new
        found = lines.seek(old, at, chunk.end_of_file)
        if found is None and old[-1] == "":
            old = old[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            found = lines.seek(old, at, chunk.end_of_file)
        if found is None:
            raise Miss(k, "lines", at)
        start, level = found
        fuzz = max(fuzz, level)
        # context lines stay as the file has them: replace only the runs between them
        o = n = 0
        for old_kept, new_kept in chunk.kept:
            if old_kept >= len(old) or new_kept >= len(new):
                break
            if o != old_kept or n != new_kept:
                replacements.append((start + o, old_kept - o, new[n:new_kept], k))
            o, n = old_kept + 1, new_kept + 1
        if o != len(old) or n != len(new):
            replacements.append((start + o, len(old) - o, new[n:], k))
        at = start + len(old)
    replacements.sort(key=lambda r: r[0])
    for before, after in itertools.pairwise(replacements):
        if after[0] < before[0] + before[1]:
            raise Miss(after[3], "overlap", before[0])
    return Located(_pieces(lines, replacements), fuzz)


def _pieces(lines: FileLines, replacements: list[tuple[int, int, tuple[str, ...], int]]
            ) -> list[tuple[int, int, str]]:
    """The replacements as text pieces; an unterminated last line gets the file's ending
    (first, where lines are appended after it)."""
    text, ending, count = lines.text, lines.ending, len(lines)
    terminated = not text or text.endswith("\n")
    pieces: list[tuple[int, int, str]] = []
    for start, length, new, _chunk in replacements:
        a, b = lines.offset(start), lines.offset(start + length)
        replacement = "".join(t + ending for t in new)
        if not terminated and a == len(text):
            replacement = ending + replacement
            terminated = True
        elif length and start + length == count:
            terminated = True  # the last line goes, and every new line has an ending
        if pieces and pieces[-1][0] == a == pieces[-1][1] == b:
            pieces[-1] = (a, b, pieces[-1][2] + replacement)  # two insertions in one place
        else:
            pieces.append((a, b, replacement))
    if not terminated:
        pieces.append((len(text), len(text), ending))
    return pieces
