"""The brace guard of delete_range (files.md §6.5): pair ``{``/``}`` by line in brace
languages, skipping comments and strings, so a deletion never cuts a block in half."""

from __future__ import annotations

import os

BRACE_EXTENSIONS = frozenset({
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".m", ".mm", ".cs",
    ".java", ".kt", ".kts", ".scala", ".sc", ".go", ".rs", ".swift",
    ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts",
    ".php", ".css", ".scss", ".less", ".json", ".jsonc",
})


def guarded(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in BRACE_EXTENSIONS


def brace_pairs(lines: list[str]) -> list[tuple[int, int]]:
    """``(open_line, close_line)`` (1-based) of every matched brace pair.

    Line comments (``//``), block comments and ``'`` ``"`` `````` strings are
    skipped; a quote that does not close on its line (a Rust lifetime, an
    apostrophe in prose) is not a string. Unpaired braces are ignored.
    """
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    in_block = False
    in_backtick = False
    for number, line in enumerate(lines, 1):
        i, n = 0, len(line)
        while i < n:
            ch = line[i]
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    break
                in_block, i = False, end + 2
                continue
            if in_backtick:
                end = _string_end(line, i, "`")
                if end < 0:
                    break
                in_backtick, i = False, end + 1
                continue
            if ch == "/" and line.startswith("//", i):
                break
            if ch == "/" and line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            if ch == "`":
                end = _string_end(line, i + 1, "`")
                if end < 0:
                    in_backtick = True
                    break
                i = end + 1
                continue
            if ch in "\"'":
                end = _string_end(line, i + 1, ch)
                if end >= 0:
                    i = end + 1
                    continue
            elif ch == "{":
                stack.append(number)
            elif ch == "}" and stack:
                pairs.append((stack.pop(), number))
            i += 1
    return pairs


def _string_end(line: str, start: int, quote: str) -> int:
    i = start
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i
        i += 1
    return -1


def cut_block(lines: list[str], first: int, last: int) -> tuple[int, int] | None:
    """The first block that deleting lines ``first``..``last`` would cut, if any."""
    for open_line, close_line in sorted(brace_pairs(lines)):
        inside_open = first <= open_line <= last
        inside_close = first <= close_line <= last
        if inside_open != inside_close:
            return open_line, close_line
    return None
