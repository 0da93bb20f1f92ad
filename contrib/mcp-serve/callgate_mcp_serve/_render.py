"""What the user behind an MCP client reads before approving a call (issue 23, item 1).

The approval message is for people: the tool, the command it would run, the paths it
would touch, and the change as a unified diff, never a Python repr such as
``FilePreview(kind='modify', …, old_bytes=b'…')``. Everything is bounded, and clipped in
the middle with a count of what is not shown; a clipped diff always shows its first change
(its first ``+``/``-`` line) and its end, so a long diff cannot hide what it changes.
Every character that draws nothing, moves the cursor or breaks a line (controls such as
``\r`` and ESC, zero-width and bidi characters, U+2028/U+2029/U+0085, non-ASCII spaces) is
escaped, newlines inside an argument show as ``⏎`` (an argument is one line), and long
blank runs are counted (`visible`), so an argument cannot hide a payload behind blanks,
push it out of the shown head and tail, or redraw what the user reads.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

PREVIEW_MAX_CHARS = 4000
ARGUMENTS_MAX_CHARS = 2000
#: a diff longer than this many lines is clipped in the middle
DIFF_MAX_LINES = 60
#: lines shown after the first change when a diff is clipped (its hunk stays readable)
FIRST_CHANGE_CONTEXT = 8
#: one diff line is clipped beyond this
LINE_MAX_CHARS = 300
#: argument keys whose value is a command line, shown on a line of its own
COMMAND_KEYS = ("command", "cmd", "script")
#: A run of this many blank or invisible characters or more is shown as a count.
BLANK_RUN = 16
#: Letters and marks that draw nothing but are not format characters (Hangul fillers,
#: the braille blank, the combining grapheme joiner, variation selectors).
_INVISIBLE_LETTERS = frozenset(
    "\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800\u034f\u180b\u180c\u180d\u180f"
) | frozenset(chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)))
#: The markers this module writes: escaped when the text itself holds them, so text
#: cannot pass for a marker.
_MARKERS = frozenset("⏎⟨⟩")
_NAMED = {"\t": "\\t", "\r": "\\r", "\n": "⏎"}
_RUN_NAMES = {" ": "space", "\n": "newline", "\t": "tab", "\r": "carriage return"}


def _hides(ch: str) -> bool:
    """Whether ``ch`` draws nothing visible by itself, or moves or breaks what is drawn:
    every control (C0, DEL, C1), format character (zero-width, bidi, tags), line or
    paragraph separator, non-ASCII space, surrogate, unassigned code point, and the
    invisible letters."""
    if " " < ch < "\x7f":
        return False
    if ch in _INVISIBLE_LETTERS:
        return True
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Zl", "Zp", "Cs", "Cn") or (cat == "Zs" and ch != " ")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _count(run: str) -> str:
    """A run of blank or invisible characters as a count, with what it is made of."""
    if set(run) == {" "}:
        return f"⟨{len(run)} blanks⟩"
    kinds = Counter(run).most_common()
    parts = [f"{n} × {_RUN_NAMES.get(ch) or f'U+{ord(ch):04X}'}" for ch, n in kinds[:3]]
    if len(kinds) > 3:
        parts.append("…")
    return f"⟨{len(run)} blank or invisible characters: {', '.join(parts)}⟩"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with nothing hidden: every character that draws nothing, moves the cursor
    or breaks a line (`_hides`) is escaped (``\\x1b``, ``\\u2028``; a newline is ``⏎``),
    and a run of `BLANK_RUN` or more blank or invisible characters is shown as a count.

    The result is one line, so nothing in it can push what follows out of view; with
    ``keep_newlines`` (prose such as a plan) ``\\n`` stays a line break, and a long run of
    them is counted like any other.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == " " or ch.isspace() or _hides(ch):
            j = i + 1
            while j < n and (text[j] == " " or text[j].isspace() or _hides(text[j])):
                j += 1
            run = text[i:j]
            if len(run) >= BLANK_RUN:
                out.append(_count(run))
            else:
                out += [c if c == " " or (keep_newlines and c == "\n") else _escape(c)
                        for c in run]
            i = j
            continue
        out.append(_escape(ch) if ch in _MARKERS else ch)
        i += 1
    return "".join(out)


def clip_lines(text: str, max_lines: int) -> str:
    """``text`` whole, or its first and last lines around a count of the lines not shown."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text
    head = max_lines * 3 // 5
    tail = max_lines - head - 1
    hidden = len(lines) - head - tail
    return "\n".join([*lines[:head], f"⟨{hidden:,} lines not shown⟩", *lines[len(lines) - tail:]])


def clip_middle(text: str, limit: int) -> str:
    """``text`` whole, or its head and tail around a marker saying how much is not shown.

    The tail is where an appended payload sits (``git status`` + spaces +
    ``; curl … | sh``), so both ends are always shown.
    """
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 2)
    head = keep * 3 // 5
    tail = keep - head
    hidden = len(text) - head - tail
    return f"{text[:head]} …⟨{hidden:,} characters not shown⟩… {text[len(text) - tail :]}"


def _is_change(line: str) -> bool:
    return line[:1] in "+-" and not line.startswith(("+++ ", "--- "))


def clip_diff(
    diff: str, max_lines: int = DIFF_MAX_LINES, max_chars: int = PREVIEW_MAX_CHARS
) -> str:
    """A unified diff within ``max_lines`` and ``max_chars``: its head through a few lines
    past the first change, a ``⟨N lines not shown⟩`` marker, and its tail."""
    lines = [clip_middle(visible(line), LINE_MAX_CHARS) for line in diff.splitlines()]
    if len(lines) <= max_lines and sum(len(x) + 1 for x in lines) <= max_chars:
        return "\n".join(lines)
    first = next((i for i, line in enumerate(lines) if _is_change(line)), 0)
    head_n = min(len(lines), max(max_lines // 2, first + FIRST_CHANGE_CONTEXT))
    tail_n = max(max_lines - head_n, 4)
    head, tail = lines[:head_n], lines[max(head_n, len(lines) - tail_n) :]
    # Characters: the head (with the first change) keeps priority; the tail shrinks first.
    while tail and sum(len(x) + 1 for x in head + tail) > max_chars - 40:
        tail = tail[1:]
    while len(head) > first + 1 and sum(len(x) + 1 for x in head) > max_chars - 40:
        head = head[:-1]
    hidden = len(lines) - len(head) - len(tail)
    if hidden <= 0:
        return "\n".join(head + tail)
    return "\n".join([*head, f"⟨{hidden:,} diff lines not shown⟩", *tail])


def _field(preview: Any, name: str) -> Any:
    if isinstance(preview, Mapping):
        return preview.get(name)
    return getattr(preview, name, None)


def _file_change(preview: Any) -> list[str]:
    """A `callgate.FilePreview` (or a mapping of its fields) for people."""
    kind, path = _field(preview, "kind"), visible(str(_field(preview, "path")))
    added, removed = _field(preview, "added") or 0, _field(preview, "removed") or 0
    if kind == "rename":
        moved = f"Move {path} to {visible(str(_field(preview, 'destination')))}"
        diff = _field(preview, "diff")  # apply_patch moves a file and edits it in one go
        return [moved + ":", clip_diff(str(diff))] if diff else [moved]
    if kind == "noop":
        return [f"{path}: no change (the file already has this content)"]
    if kind == "delete":
        return [f"Delete {path}"]
    verb = "Create" if kind == "create" else "Modify"
    counts = f" (+{added} -{removed} lines)" if added or removed else ""
    if _field(preview, "binary"):
        size = len(_field(preview, "new_bytes") or b"")
        return [f"{verb} {path}: binary content, {size:,} bytes"]
    diff = _field(preview, "diff")
    if not diff:
        return [f"{verb} {path}{counts}"]
    return [f"{verb} {path}{counts}:", clip_diff(str(diff))]


def _looks_like_file_change(preview: Any) -> bool:
    return (
        _field(preview, "kind") in ("create", "modify", "rename", "delete", "noop")
        and _field(preview, "path") is not None
    )


def render_preview(preview: Any) -> list[str]:
    """Lines describing ``preview`` (whatever a tool's ``preview`` returned)."""
    if preview is None:
        return []
    if isinstance(preview, str):
        return [clip_diff(preview)]
    if _looks_like_file_change(preview):
        return _file_change(preview)
    if isinstance(preview, Iterable) and not isinstance(preview, (bytes, Mapping)):
        out: list[str] = []
        for item in list(preview)[:20]:
            out += render_preview(item)
        return out
    if isinstance(preview, Mapping):
        return [clip_middle(visible(_json(preview)), PREVIEW_MAX_CHARS)]
    return [clip_middle(visible(str(preview)), PREVIEW_MAX_CHARS)]


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def _path_keys(tool: Any) -> list[str]:
    roles = getattr(tool, "mutates_paths", ()) or ()
    return [getattr(r, "argument", None) or str(r) for r in roles]


def approval_message(call: Any, preview: Any, tool: Any = None) -> str:
    """What the client shows its user: the tool, its command, its paths, its change, and
    the remaining arguments."""
    args = call.arguments if isinstance(call.arguments, Mapping) else {}
    lines = [f"callgate asks for approval: run {call.name}?"]
    rest = dict(args)
    for key in COMMAND_KEYS:
        if isinstance(args.get(key), str):
            lines.append(f"Command: {clip_middle(visible(args[key]), ARGUMENTS_MAX_CHARS)}")
            rest.pop(key)
            break
    paths = [(k, args[k]) for k in _path_keys(tool) if isinstance(args.get(k), str)]
    if paths:
        lines.append("Paths: " + ", ".join(f"{clip_middle(visible(v), LINE_MAX_CHARS)} ({k})"
                                           for k, v in paths))
    shown = render_preview(preview)
    if shown:
        lines += ["Change it would make:", *shown]
    if rest:
        lines.append(f"Arguments: {clip_middle(visible(_json(rest)), ARGUMENTS_MAX_CHARS)}")
    elif not isinstance(call.arguments, Mapping):
        lines.append(f"Arguments: {clip_middle(visible(_json(call.arguments)), 200)}")
    return "\n".join(lines)


__all__ = ["approval_message", "clip_diff", "clip_lines", "clip_middle", "render_preview",
           "visible"]
