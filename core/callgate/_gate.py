"""The host gate for structured mutations (host.md §3 step 5, files.md §5.4 and §6).

Driven by a tool's ``mutates_paths``: confinement, then the writer lease,
then ``stat``, then the observation check. Any tool that declares its path
arguments gets the same protection, third-party tools included.
"""

from __future__ import annotations

import difflib
import os
import stat as stat_mod
from typing import TYPE_CHECKING, Any

from ._context import GatedPath
from ._errors import ToolError
from ._lease import WriterLease
from ._model import PathRole
from ._observations import Absent, Present, matches, version_of
from ._spec import ToolSpec

if TYPE_CHECKING:
    from ._session import Session

STALE_DETAIL_MAX_BYTES = 1 << 20


def not_found(display: str) -> ToolError:
    return ToolError("not_found", f"FS_NOT_FOUND: {display} does not exist; check the path "
                     "(ls or glob), or create the file with write_file", "FS_NOT_FOUND")


def is_directory(display: str, tool: str) -> ToolError:
    return ToolError("tool_error", f"FS_IS_DIRECTORY: {display} is a directory; {tool} works on "
                     "files (list a directory with ls)", "FS_IS_DIRECTORY")


def not_regular(display: str) -> ToolError:
    return ToolError("tool_error", f"FS_NOT_REGULAR: {display} is not a regular file (a FIFO, "
                     "socket or device); use the shell for it", "FS_NOT_REGULAR")


def not_observed(display: str) -> ToolError:
    return ToolError("not_observed", f"FS_NOT_OBSERVED: {display} has not been read in this "
                     "session; read any window of it with read_file, then retry",
                     "FS_NOT_OBSERVED")


def stale(display: str, detail: str | None = None) -> ToolError:
    text = (f"FS_STALE_VERSION: {display} changed after this session last read it; read it "
            "again (any window), then retry")
    if detail:
        text += "\n" + detail
    return ToolError("stale_version", text, "FS_STALE_VERSION")


def removed_after_read(display: str) -> ToolError:
    return ToolError("stale_version", f"FS_STALE_VERSION: {display} was removed after this "
                     "session read it; read it again to confirm it is absent, then retry",
                     "FS_STALE_VERSION")


def stale_detail(session: Session, entry: Present, path: str,
                 st: os.stat_result) -> str | None:
    """What changed since the observation: a small diff, or "only metadata" (files.md §5.6)."""
    if not session.host.plugin_config_value("files", "stale_detail", True):
        return None
    before = session.ledger.snapshot(entry)
    if before is None or st.st_size > STALE_DETAIL_MAX_BYTES:
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read(STALE_DETAIL_MAX_BYTES + 1)
        now = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if now == before:
        return "content is the same; only file metadata changed"
    diff = list(difflib.unified_diff(before.splitlines(), now.splitlines(), lineterm="", n=0))[2:]
    added = sum(1 for d in diff if d.startswith("+"))
    removed = sum(1 for d in diff if d.startswith("-"))
    shown: list[str] = []
    size = 0
    for line in diff:
        if len(shown) >= 30 or size + len(line) + 1 > 2048:
            shown.append(f"… (+{added}/-{removed} lines in total)")
            break
        shown.append(line)
        size += len(line) + 1
    return "changed since that read:\n" + "\n".join(shown)


def _stat(path: str, follow: bool) -> os.stat_result | None:
    try:
        return os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def check_paths(session: Session, spec: ToolSpec, arguments: dict[str, Any], *,
                lease: WriterLease | None, dry_run: bool = False,
                expected_versions: dict[str, Any] | None = None) -> dict[str, GatedPath]:
    """Run the gate for every declared path argument; returns the gated paths.

    ``lease`` (when given) is acquired here, after confinement and before any
    stat; the caller releases it once the tool has recorded its new version.
    ``dry_run`` (previews) changes no ledger entry.
    """
    roles: list[tuple[PathRole, str]] = []
    for role in spec.mutates_paths:
        value = arguments.get(role.argument)
        if isinstance(value, str):
            roles.append((role, value))
    resolved = [(role, session.workspace.resolve(value, write=True)) for role, value in roles]
    if lease is not None:
        lease.paths = sorted({r.path for _, r in resolved})
        lease.acquire()
    gated: dict[str, GatedPath] = {}
    for role, rp in resolved:
        follow = role.follow_symlinks
        target = rp.path if follow else rp.lexical
        st = _stat(target, follow)
        entry = session.ledger.lookup(rp.path, st)
        if st is None:
            if role.mode == "modify":
                if not dry_run:
                    session.ledger.record_absent(rp.path)
                raise not_found(rp.display)
            if isinstance(entry, Present):
                raise removed_after_read(rp.display)
            gated[role.argument] = GatedPath(role.argument, role, rp, None)
            continue
        if role.mode == "create":
            if isinstance(entry, Present) and not matches(entry, st, target):
                pass  # the tool decides what an existing destination means
            gated[role.argument] = GatedPath(role.argument, role, rp, st)
            continue
        if stat_mod.S_ISDIR(st.st_mode):
            raise is_directory(rp.display, spec.alias_of or spec.name)
        if not stat_mod.S_ISREG(st.st_mode):
            raise not_regular(rp.display)
        if entry is None or isinstance(entry, Absent):
            raise not_observed(rp.display)
        if not matches(entry, st, target):
            raise stale(rp.display, stale_detail(session, entry, target, st))
        if expected_versions is not None:
            want = expected_versions.get(role.argument)
            if want is not None and want != version_of(st):
                raise stale(rp.display)
        gated[role.argument] = GatedPath(role.argument, role, rp, st)
    return gated
