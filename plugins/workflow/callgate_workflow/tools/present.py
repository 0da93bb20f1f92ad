"""``present`` and ``session.extension(PRESENTED_FILES)``: the files the user should look at.

All or nothing: every path is resolved by the core's workspace rules and
``stat``-ed; one failure rejects the call and records nothing. The tool never
opens, copies, executes or uploads a file: it records paths and descriptions.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any

from callgate import SessionKey, ToolContext, ToolError, ToolSpec

from .._state import StateFile

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["files"],
    "properties": {
        "files": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                             "description": "An existing file, relative to the workspace."},
                    "description": {"type": ["string", "null"], "maxLength": 500,
                                    "description": "What the user finds in it."},
                },
            },
        },
    },
}

DESCRIPTION = (
    "Hand 1 to 8 finished files to the user as deliverables: call it after writing them and "
    "before your final answer. Every path must name an existing regular file in the "
    "workspace; if any does not, nothing is recorded. Only the paths and your descriptions "
    "are recorded: the files are not opened, copied, run or uploaded."
)


#: ``session.extension(PRESENTED_FILES)``: this plugin's per-session object
PRESENTED_FILES: SessionKey[PresentedFiles] = SessionKey("presented_files")


class PresentedFiles:
    """``session.extension(PRESENTED_FILES)``: ``{path, description}`` in first-presented order."""

    def __init__(self, session: Any) -> None:
        self._lock = threading.Lock()
        self._file = StateFile(session, "presented", "presented.json")
        self._entries: list[dict[str, Any]] = []
        data = self._file.load()
        if data is not None and isinstance(data.get("files"), list):
            self._entries = [{"path": e["path"], "description": e.get("description")}
                             for e in data["files"]
                             if isinstance(e, dict) and isinstance(e.get("path"), str)]

    def entries(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(e) for e in self._entries]

    def __iter__(self) -> Any:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    def record(self, files: list[tuple[str, str | None]]) -> None:
        """Add or update entries; a path presented again gets the new description."""
        with self._lock:
            entries = [dict(e) for e in self._entries]
            index = {e["path"]: e for e in entries}
            for path, description in files:
                if path in index:
                    if description is not None:
                        index[path]["description"] = description
                else:
                    entry = {"path": path, "description": description}
                    entries.append(entry)
                    index[path] = entry
            self._file.save({"files": entries})
            self._entries = entries


def _examine(ctx: ToolContext, path: str) -> tuple[str | None, str | None]:
    """(canonical path, None) for a presentable file, else (canonical or None, reason)."""
    try:
        resolved = ctx.workspace.resolve(path)
    except ToolError as exc:
        return None, exc.message
    try:
        st = os.stat(resolved.path)
    except (FileNotFoundError, NotADirectoryError):
        return None, "does not exist"
    except OSError as exc:
        return None, f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return None, "is a directory"
    if not stat.S_ISREG(st.st_mode):
        return None, "is not a regular file"
    return resolved.path, None


def run(ctx: ToolContext, args: dict[str, Any]) -> str:
    files = args["files"]
    failures: list[str] = []
    accepted: list[tuple[str, str | None]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(files):
        canonical, reason = _examine(ctx, item["path"])
        if canonical is not None and canonical in seen:
            reason = f"duplicate of files/{seen[canonical]}"
        elif canonical is not None:
            seen[canonical] = i
            accepted.append((ctx.workspace.display(canonical), item.get("description")))
        if reason is not None:
            failures.append(f'- files/{i} "{item["path"]}": {reason}')
    if failures:
        message = "\n".join([f"present: {len(failures)} of {len(files)} files were rejected; "
                             "nothing was recorded", *failures])
        raise ToolError("tool_error", message, "PRESENT_REJECTED")
    ctx.session.extension(PRESENTED_FILES).record(accepted)
    noun = "file" if len(accepted) == 1 else "files"
    lines = [f"Presented {len(accepted)} {noun}:"]
    for path, description in accepted:
        lines.append(f"- {path} — {description}" if description else f"- {path}")
    return "\n".join(lines)


TOOL = ToolSpec(name="present", description=DESCRIPTION, schema=SCHEMA, execute=run,
                read_only=True, groups=("workflow",))
