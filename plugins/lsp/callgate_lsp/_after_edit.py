"""Diagnostics after edits: a mutation's result lists the diagnostics it introduced.

With ``[lsp] diagnostics_after_edit = true``, any tool that declares
``mutates_paths`` (``edit_file``, ``write_file``, ``delete_symbol``, a third
party's) gets this, directly or through ``use_capability``:

1. ``callgate_pre_tool_use`` (before permission, gates and the tool itself)
   reads each declared path the tool may modify, if a configured server
   covers it, and starts, on the session's LSP loop, a check of that
   *pre-edit* content: sync it to the server and wait for its diagnostics.
   The check runs while the call is approved and executed. The snapshot is
   kept by call id.
2. ``callgate_shape_result`` (after the call succeeded) syncs the file's new
   content, waits for its diagnostics, and appends ``New diagnostics:`` with
   the ones that were not there before. The whole wait is bounded by
   ``after_edit_wait_ms`` (≤ 2 s); the section by ``after_edit_max_lines``.

A diagnostic counts as old when one with the same severity, source, code,
message and source line text existed before (so a pre-existing error that
merely moved down a few lines is not new). When two mutations of one batch
touch the same file, the later one's snapshot is the earlier one's "after", so
each result shows only what its own change introduced.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs
from callgate import ToolError, ToolResult
from lsprotocol import types

from . import _render
from ._manager import LspManager
from ._server import ServerFailed
from ._table import ServerSpec
from .tools.lsp import EXTENSION

log = logging.getLogger("callgate.lsp")

MODES = ("modify", "create_or_modify")
SEVERITY_RANK = {"error": 1, "warning": 2, "information": 3, "hint": 4}
STALE_SNAPSHOT_S = 600.0


@attrs.frozen
class Report:
    """A server's diagnostics for one exact content of one file."""

    diagnostics: Sequence[types.Diagnostic]
    lines: Sequence[str]
    encoding: str


@attrs.define
class Entry:
    """One path of one mutating call: its pre-edit check, and (when a later call in the batch
    touched the same file first) the check of the content this call left behind."""

    path: str
    display: str
    spec: ServerSpec
    before: concurrent.futures.Future[Report | None]
    after: concurrent.futures.Future[Report | None] | None = None


@attrs.define
class Snapshot:
    call_id: str
    entries: list[Entry]
    taken: float = attrs.field(factory=time.monotonic)

    def cancel(self) -> None:
        for entry in self.entries:
            entry.before.cancel()


def decoded(arguments: Any) -> dict[str, Any] | None:
    """The call's arguments as an object: already decoded, or a JSON string (a raw call)."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str | bytes):
        try:
            value = json.loads(arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def _read(path: str, max_bytes: int) -> bytes | None:
    """The file's bytes now; ``None`` when it is missing, not a regular file, or too large."""
    try:
        st = os.stat(path)
        if not os.path.isfile(path) or st.st_size > max_bytes:
            return None
        with open(path, "rb") as fh:
            return fh.read(max_bytes + 1)
    except OSError:
        return None


async def check(mgr: LspManager, spec: ServerSpec, path: str, content: bytes | None,
                wait_s: float) -> Report | None:
    """Sync ``content`` as ``path`` and wait for the diagnostics of exactly that version.

    Checks of one path run one after the other: syncing the next content before the server
    reported on this one would make it skip this report. ``None`` content (the file does not
    exist yet) has no diagnostics. Returns ``None`` when the server reported nothing for this
    version within ``wait_s``."""
    previous = mgr.checks.get(path)
    current = asyncio.current_task()
    mgr.checks[path] = current
    try:
        if previous is not None and not previous.done():
            await asyncio.wait({previous}, timeout=wait_s)
        if content is None:  # nothing there yet: nothing to report, no server needed
            return Report((), (), "utf-16")
        server, _note = await mgr.server(spec)
        doc = server.sync(path, content)
        version, lines = doc.version, list(doc.lines)
        published, fresh = await server.report(doc, wait_s, version=version)
        if published is None or not fresh:
            return None
        return Report(list(published.diagnostics), lines, server.encoding)
    finally:
        if mgr.checks.get(path) is current:
            del mgr.checks[path]


# --- step 3: the snapshot (and warming up on reads) -------------------------------------------

WARM_WAIT_S = 10.0


def warm(call: Any, tool: Any, session: Any) -> None:
    """A read-only tool about a path (``read_file`` before an edit) starts that file's check in
    the background, so the server is up and the "before" is known by the time of the edit."""
    subject = tool.permission_subject
    if subject is None or subject.kind != "path" or tool.name.startswith("lsp_"):
        return
    args = decoded(call.arguments)
    if args is None:
        return
    mgr: LspManager = session.extension(EXTENSION)
    max_bytes = int(mgr.config.get("max_file_bytes", 2 * 1024 * 1024))
    for name in subject.arguments:
        value = args.get(name)
        if not isinstance(value, str):
            continue
        try:
            resolved = session.workspace.resolve(value)
            spec = mgr.table.for_path(resolved.path)
            if spec is None:
                continue
            spec.launch(session, mgr.config.get("server_paths") or ())
        except ToolError:
            continue
        content = _read(resolved.path, max_bytes)
        if content is not None:
            try:
                mgr.submit(check(mgr, spec, resolved.path, content, WARM_WAIT_S))
            except ToolError:
                return



def take_snapshot(call: Any, tool: Any, session: Any) -> None:
    roles = [r for r in tool.mutates_paths if r.mode in MODES]
    if not roles:
        return
    args = decoded(call.arguments)
    if args is None:
        return
    mgr: LspManager = session.extension(EXTENSION)
    cfg = mgr.config
    max_bytes = int(cfg.get("max_file_bytes", 2 * 1024 * 1024))
    long_wait = float(cfg.get("request_timeout_s", 30))
    entries: list[Entry] = []
    for role in roles:
        value = args.get(role.argument)
        if not isinstance(value, str):
            continue
        try:
            resolved = session.workspace.resolve(value, write=True)
            spec = mgr.table.for_path(resolved.path)
            if spec is None:
                continue
            spec.launch(session, mgr.config.get("server_paths") or ())  # installed?
        except ToolError as exc:
            if exc.signature == "LSP_SERVER_NOT_FOUND":
                _note_missing(session, mgr, exc.message)
            continue
        content = _read(resolved.path, max_bytes)
        if content is None and os.path.lexists(resolved.path):
            continue  # not a regular file we can check
        try:
            future = mgr.submit(check(mgr, spec, resolved.path, content, long_wait))
        except ToolError:
            continue
        entry = Entry(resolved.path, resolved.display, spec, future)
        for earlier in mgr.snapshots.values():  # an earlier call of this batch leaves this
            for other in earlier.entries:
                if other.path == entry.path and other.after is None:
                    other.after = future
        entries.append(entry)
    _forget_stale(mgr)
    if entries:
        mgr.snapshots[call.id] = Snapshot(call.id, entries)


def _note_missing(session: Any, mgr: LspManager, message: str) -> None:
    if message in mgr.missing_noted:
        return
    mgr.missing_noted.add(message)
    session.notices.put("lsp", f"diagnostics after edits are off for this file type: {message}")


def _forget_stale(mgr: LspManager) -> None:
    now = time.monotonic()
    for call_id, snap in list(mgr.snapshots.items()):
        if now - snap.taken > STALE_SNAPSHOT_S:
            snap.cancel()
            del mgr.snapshots[call_id]


# --- step 7: the section ------------------------------------------------------------------------


def shape(call: Any, tool: Any, result: ToolResult, session: Any) -> ToolResult | None:
    mgr: LspManager = session.extension(EXTENSION)
    snap = mgr.snapshots.pop(call.id, None)
    if snap is None:
        return None
    if result.is_error:
        snap.cancel()
        return None
    entries = _still_targeted(snap, call, tool, session)
    if not entries:
        return None
    cfg = mgr.config
    deadline = time.monotonic() + int(cfg.get("after_edit_wait_ms", 2000)) / 1000
    max_bytes = int(cfg.get("max_file_bytes", 2 * 1024 * 1024))
    threshold = SEVERITY_RANK[cfg.get("after_edit_min_severity", "warning")]
    limit = int(cfg.get("after_edit_max_lines", 10))
    new: list[str] = []
    missing: list[str] = []
    for entry in entries:
        found = _new_in(mgr, entry, deadline, max_bytes, threshold)
        if found is None:
            missing.append(entry.spec.label)
        else:
            new.extend(found)
    return _with_section(result, new, missing, limit, deadline, cfg)


def _still_targeted(snap: Snapshot, call: Any, tool: Any, session: Any) -> list[Entry]:
    """The snapshot's entries for the paths the call finally ran with (a later hook may have
    replaced the arguments; a raw call through use_capability does not carry them)."""
    args = decoded(call.arguments)
    roles = [r for r in getattr(tool, "mutates_paths", ()) if r.mode in MODES]
    if args is None or not roles or not any(r.argument in args for r in roles):
        return snap.entries
    finals = set()
    for role in roles:
        value = args.get(role.argument)
        if isinstance(value, str):
            try:
                finals.add(session.workspace.resolve(value, write=True).path)
            except ToolError:
                continue
    return [e for e in snap.entries if e.path in finals]


def _new_in(mgr: LspManager, entry: Entry, deadline: float, max_bytes: int,
            threshold: int) -> list[str] | None:
    """The section lines for one path, or ``None`` when the server did not report in time."""
    try:
        before = mgr.wait(entry.before, None, max(0.0, deadline - time.monotonic()))
        if before is None:
            return None
        after_future = entry.after
        if after_future is None:
            content = _read(entry.path, max_bytes)
            if content is None:
                return []  # deleted, or replaced by something we do not check
            after_future = mgr.submit(check(mgr, entry.spec, entry.path, content,
                                            max(0.0, deadline - time.monotonic())))
        after = mgr.wait(after_future, None, max(0.0, deadline - time.monotonic()))
    except (TimeoutError, ServerFailed, ToolError, concurrent.futures.CancelledError):
        return None
    except Exception:
        log.debug("diagnostics after edit failed for %s", entry.display, exc_info=True)
        return None
    if after is None:
        return None
    return [_render.diagnostic_line(d, after.lines, after.encoding, prefix=f"{entry.display}:")
            for d in introduced(before, after)
            if SEVERITY_RANK[_render.severity_name(d)] <= threshold]


def _key(diagnostic: types.Diagnostic, lines: Sequence[str]) -> tuple[Any, ...]:
    line = diagnostic.range.start.line
    text = lines[line].strip() if 0 <= line < len(lines) else ""
    code = diagnostic.code if not isinstance(diagnostic.code, dict) else str(diagnostic.code)
    return (int(diagnostic.severity or 1), diagnostic.source, code, diagnostic.message, text)


def introduced(before: Report, after: Report) -> list[types.Diagnostic]:
    """The diagnostics of ``after`` that ``before`` did not have (counted as a multiset)."""
    old = Counter(_key(d, before.lines) for d in before.diagnostics)
    out = []
    for diagnostic in _render.sorted_diagnostics(after.diagnostics):
        key = _key(diagnostic, after.lines)
        if old[key] > 0:
            old[key] -= 1
        else:
            out.append(diagnostic)
    return out


def _with_section(result: ToolResult, new: list[str], missing: list[str], limit: int,
                  deadline: float, cfg: dict[str, Any]) -> ToolResult:
    wait_s = int(cfg.get("after_edit_wait_ms", 2000)) / 1000
    if new:
        lines = ["New diagnostics:", *new[:limit]]
        if len(new) > limit:
            lines.append(f"… and {len(new) - limit} more (lsp_diagnostics lists them all)")
    elif missing:
        lines = []
    else:
        lines = ["New diagnostics: none"]
    if missing:
        who = ", ".join(sorted(set(missing)))
        lines.append(f"New diagnostics: not known yet ({who} did not report within "
                     f"{wait_s:g} s; lsp_diagnostics shows them)")
    shaped = result.with_text("\n\n".join([result.text, "\n".join(lines)]))
    shaped.meta = {**result.meta, "new_diagnostics": len(new)}
    return shaped
