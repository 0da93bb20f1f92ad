"""What a grep engine is asked, what it answers, and the one formatter both feed (search.md §2).

Engines differ in how they find matching lines; everything the model reads
(paths, the match cap, context ranges, ``--`` separators, long-line cuts) is
decided here, once, so the two engines cannot drift apart in presentation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import attrs
from callgate.paths import ResolvedPath
from callgate_toolkit.walk import IgnoreRules

from ._file_filter import FileFilter

LINE_MAX_CHARS = 500


@attrs.define
class GrepRequest:
    """One search: where, what, and the limits every engine honours."""

    root: str
    """The directory every printed path is relative to (the workspace root)."""
    target_rel: str
    """The searched file or directory relative to ``root`` (``""`` for the root itself)."""
    is_file: bool
    pattern: str
    ignore_case: bool
    context: int
    glob: FileFilter | None
    limit: int
    deadline: float
    cancelled: threading.Event
    rules: IgnoreRules
    timed_out: bool = False
    max_file_bytes: int = 64 << 20
    """Walked files larger than this are skipped: a match is held in memory whole, so a
    multi-gigabyte line would cost gigabytes (both engines skip them alike)."""
    base: ResolvedPath | None = None
    """``root`` as a confined path: every file is read beneath it (race-free)."""
    denied: Callable[[ResolvedPath], bool] | None = None
    """The read deny list (when on): a denied file is searched by neither engine."""

    def resolved(self, rel: str) -> ResolvedPath:
        """The file ``rel`` (relative to ``root``) as a confined path."""
        assert self.base is not None, "GrepRequest.base is needed to read files"
        return self.base.child(rel) if rel else self.base

    def hidden(self, rel: str) -> bool:
        """Whether the deny list hides ``rel``."""
        return self.denied is not None and self.denied(self.resolved(rel))

    def wanted(self, rel: str) -> bool:
        """The ``glob`` filter: it only narrows (names at any depth, or whole paths; a
        ``!`` glob leaves its matches out)."""
        return self.glob is None or self.glob.matches(rel)


@attrs.define
class FileHits:
    """The matching lines of one file, and the text of every line a context range may show."""

    path: str
    matches: list[int] = attrs.Factory(list)
    lines: dict[int, str] = attrs.Factory(dict)


def cut(text: str) -> str:
    """A line as printed: no trailing ``\\r``; over 500 characters, the first 500 and a count."""
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) > LINE_MAX_CHARS:
        return f"{text[:LINE_MAX_CHARS]}… (+{len(text) - LINE_MAX_CHARS} chars)"
    return text


@attrs.define
class Rendered:
    lines: list[str]
    kept: int
    truncated: bool
    #: the kept matches as data: ``{"path", "line", "text"}`` (the text as printed)
    matches: list[dict[str, Any]] = attrs.Factory(list)


def render(hits: Iterable[FileHits], limit: int, context: int) -> Rendered:
    """Lay out the first ``limit`` matching lines (in path, then line order) with context.

    Kept matches print as ``path:line:text``; every other line in a range (a
    match past the cap included) as ``path-line-text``; ``--`` separates
    consecutive ranges. Stops pulling from ``hits`` once the cap is known to
    be exceeded.
    """
    out: list[str] = []
    found: list[dict[str, Any]] = []
    kept = 0
    truncated = False
    for fh in hits:
        if not fh.matches:
            continue
        if kept >= limit:
            truncated = True
            break
        take = fh.matches[: limit - kept]
        kept += len(take)
        if len(take) < len(fh.matches):
            truncated = True
        chosen = set(take)
        for start, end in _ranges(take, context):
            if context and out:
                out.append("--")
            for number in range(start, end + 1):
                text = fh.lines.get(number)
                if text is None:
                    continue
                mark = ":" if number in chosen else "-"
                shown = cut(text)
                out.append(f"{fh.path}{mark}{number}{mark}{shown}")
                if number in chosen:
                    found.append({"path": fh.path, "line": number, "text": shown})
        if truncated:
            break
    return Rendered(out, kept, truncated, found)


def _ranges(lines: list[int], context: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for line in lines:
        start, end = max(1, line - context), line + context
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
