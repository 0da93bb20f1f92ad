"""Lines and columns the way LSP counts them.

LSP splits lines at ``\\n``, ``\\r\\n`` and ``\\r`` only (not at the other
characters `str.splitlines` knows), and counts a column in the code units of
the negotiated position encoding: UTF-8 bytes, UTF-16 units (the default), or
code points (UTF-32). The symbol the model names is found as a code-point index
(`_syntax`) and converted both ways here.
"""

from __future__ import annotations

import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their breaks (LSP's rule: ``\\n``, ``\\r\\n``, ``\\r``)."""
    return _LINE_BREAK.split(text)


def units(text: str, encoding: str) -> int:
    """How many code units of ``encoding`` ``text`` takes."""
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_units(line: str, column: int, encoding: str) -> int:
    """A code-point column of ``line`` as a column in ``encoding``'s units."""
    return units(line[:column], encoding)


def from_units(line: str, column: int, encoding: str) -> int:
    """A column in ``encoding``'s units as a code-point column of ``line`` (clamped to the
    line; a column inside a character counts as that character)."""
    if encoding == UTF32:
        return max(0, min(column, len(line)))
    count = 0
    for i, ch in enumerate(line):
        if count >= column:
            return i
        count += units(ch, encoding)
    return len(line)
