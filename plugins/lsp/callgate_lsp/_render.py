"""The text the model reads: locations, hover text and diagnostics.

Paths inside the workspace are shown workspace-relative; a location outside
it (a library's source, the standard library's stubs) is shown by its
absolute path and marked as such, without its source line: the tools read
nothing outside the workspace's read roots.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
from lsprotocol import types
from pygls.uris import to_fs_path

from ._positions import from_units

MAX_SOURCE_CHARS = 200
MAX_MESSAGE_CHARS = 400
MAX_HOVER_CHARS = 6000

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@attrs.frozen
class Place:
    """One location a server answered: a file (or a non-file URI) and a 0-based line."""

    path: str | None
    uri: str
    line: int


def places(result: Any) -> list[Place]:
    """The locations in a definition/references answer (Location, LocationLink, lists)."""
    if result is None:
        return []
    items = result if isinstance(result, list | tuple) else [result]
    out = []
    for item in items:
        if isinstance(item, types.LocationLink):
            uri, line = item.target_uri, item.target_selection_range.start.line
        elif isinstance(item, types.Location):
            uri, line = item.uri, item.range.start.line
        else:
            continue
        path = to_fs_path(uri) if uri.startswith("file:") else None
        out.append(Place(path, uri, line))
    return out


class Shower:
    """Names paths for the model and finds their source lines (inside the read roots only)."""

    def __init__(self, display: Callable[[str], str], inside: Callable[[str], bool],
                 known: dict[str, list[str]]) -> None:
        self._display = display
        self._inside = inside
        self._lines = dict(known)

    def name(self, place: Place) -> tuple[str, bool]:
        """``(shown name, inside the workspace)``."""
        if place.path is None:
            return place.uri, False
        if self._inside(place.path):
            return self._display(place.path), True
        return os.path.normpath(place.path), False

    def source(self, path: str, line: int) -> str:
        lines = self._lines.get(path)
        if lines is None:
            lines = _read_lines(path)
            self._lines[path] = lines
        if 0 <= line < len(lines):
            return clip(lines[line].strip(), MAX_SOURCE_CHARS)
        return ""


#: the lines of files answers point into, by (path, size, mtime, inode): a definition asked
#: for again reads nothing (kept for files up to `_CACHED_BYTES`, `_CACHED_FILES` of them)
_lines_cache: OrderedDict[tuple[str, int, int, int], list[str]] = OrderedDict()
_lines_lock = threading.Lock()
_CACHED_FILES = 64
_CACHED_BYTES = 1 << 20


def _read_lines(path: str) -> list[str]:
    from ._positions import split_lines
    from ._server import decode

    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
            with _lines_lock:
                found = _lines_cache.get(key)
                if found is not None:
                    _lines_cache.move_to_end(key)
                    return found
            lines = split_lines(decode(fh.read(8 * 1024 * 1024)))
    except OSError:
        return []
    if st.st_size <= _CACHED_BYTES:
        with _lines_lock:
            _lines_cache[key] = lines
            while len(_lines_cache) > _CACHED_FILES:
                _lines_cache.popitem(last=False)
    return lines


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def location_lines(found: Sequence[Place], shower: Shower, limit: int) -> list[str]:
    """``path:line  source`` lines, one per line of code (repeats on a line are counted)."""
    seen: dict[tuple[str, int], int] = {}
    order: list[tuple[Place, str, bool]] = []
    for place in found:
        name, inside = shower.name(place)
        key = (name, place.line)
        if key in seen:
            seen[key] += 1
            continue
        seen[key] = 1
        order.append((place, name, inside))
    out = []
    for place, name, inside in order[:limit]:
        count = seen[(name, place.line)]
        if inside and place.path is not None:
            text = f"{name}:{place.line + 1}  {shower.source(place.path, place.line)}".rstrip()
        else:
            text = f"{name}:{place.line + 1}  (outside the workspace)"
        if count > 1:
            text += f"  ({count} on this line)"
        out.append(text)
    if len(order) > limit:
        out.append(f"… and {len(order) - limit} more line(s)")
    return out


def sort_references(found: Iterable[Place], shower: Shower) -> list[Place]:
    """Workspace files first, then by path and line."""
    def key(place: Place) -> tuple[bool, str, int]:
        name, inside = shower.name(place)
        return (not inside, name, place.line)

    return sorted(found, key=key)


# --- hover ------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")


def hover_text(hover: types.Hover | None) -> str:
    """A hover's contents as plain text (markdown fences and escapes removed)."""
    if hover is None:
        return ""
    contents = hover.contents
    parts: list[tuple[str, bool]] = []  # (text, is markdown)
    items = contents if isinstance(contents, list | tuple) else [contents]
    for item in items:
        if isinstance(item, types.MarkupContent):
            parts.append((item.value, item.kind == types.MarkupKind.Markdown))
        elif isinstance(item, types.MarkedStringWithLanguage):
            parts.append((item.value, False))
        elif isinstance(item, str):
            parts.append((item, True))
    texts = [_plain(text) if markdown else text.strip() for text, markdown in parts]
    return clip("\n\n".join(t for t in texts if t), MAX_HOVER_CHARS)


def _plain(markdown: str) -> str:
    out = []
    for line in markdown.splitlines():
        if _FENCE.match(line):
            continue
        out.append(_ESCAPED.sub(r"\1", line).replace("&nbsp;", " "))
    return "\n".join(out).strip()


# --- diagnostics ------------------------------------------------------------------------------


def severity_name(diagnostic: types.Diagnostic) -> str:
    return SEVERITIES.get(int(diagnostic.severity or 1), "error")


def message_of(diagnostic: types.Diagnostic) -> str:
    text = " ".join(part.strip() for part in diagnostic.message.splitlines() if part.strip())
    return clip(text.replace("\xa0", " "), MAX_MESSAGE_CHARS)


def diagnostic_line(diagnostic: types.Diagnostic, lines: Sequence[str], encoding: str,
                    prefix: str = "") -> str:
    """``line:col severity [source] message (code)``, 1-based, the column in characters."""
    start = diagnostic.range.start
    text = lines[start.line] if 0 <= start.line < len(lines) else ""
    col = from_units(text, start.character, encoding) + 1
    source = f" [{diagnostic.source}]" if diagnostic.source else ""
    code = f" ({diagnostic.code})" if diagnostic.code not in (None, "") else ""
    return f"{prefix}{start.line + 1}:{col} {severity_name(diagnostic)}{source} " \
           f"{message_of(diagnostic)}{code}"


def sorted_diagnostics(found: Iterable[types.Diagnostic]) -> list[types.Diagnostic]:
    return sorted(found, key=lambda d: (d.range.start.line, d.range.start.character,
                                        int(d.severity or 1)))
