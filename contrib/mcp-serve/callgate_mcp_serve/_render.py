"""What the user behind an MCP client reads before approving a call (issue 23, item 1).

The approval message is for people: the tool, the command it would run, the paths it
would touch, and the change as a unified diff, never a Python repr such as
``FilePreview(kind='modify', …, old_bytes=b'…')``. Everything is bounded, and clipped in
the middle with a count of what is not shown; a clipped diff always shows its first change
(its first ``+``/``-`` line) and its end, so a long diff cannot hide what it changes.
Invisible characters are escaped and long blank runs counted (`visible`), so an argument
cannot hide a payload behind spaces or bidi controls.
"""

from __future__ import annotations

import json
import re
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
#: A run of this many blank characters or more is shown as a count, never as blank space.
_BLANK_RUN = re.compile(r"[ \t]{16,}")
#: Characters that draw nothing or reorder what is drawn (bidi overrides, zero-width).
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)


def visible(text: str) -> str:
    """``text`` with long blank runs counted and invisible characters escaped."""
    text = _BLANK_RUN.sub(lambda m: f"⟨{len(m.group(0))} blanks⟩", text)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


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
        return [f"Move {path} to {visible(str(_field(preview, 'destination')))}"]
    if kind == "noop":
        return [f"{path}: no change (the file already has this content)"]
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
        _field(preview, "kind") in ("create", "modify", "rename", "noop")
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
        lines.append("Paths: " + ", ".join(f"{visible(v)} ({k})" for k, v in paths))
    shown = render_preview(preview)
    if shown:
        lines += ["Change it would make:", *shown]
    if rest:
        lines.append(f"Arguments: {clip_middle(visible(_json(rest)), ARGUMENTS_MAX_CHARS)}")
    elif not isinstance(call.arguments, Mapping):
        lines.append(f"Arguments: {clip_middle(visible(_json(call.arguments)), 200)}")
    return "\n".join(lines)


__all__ = ["approval_message", "clip_diff", "clip_middle", "render_preview", "visible"]
