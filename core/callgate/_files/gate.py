"""The host gate for structured mutations (host.md §3 step 5, files.md §5.4 and §6).

Driven by a tool's ``mutates_paths``: confinement of every path, then the
writer lease over all of them (sorted), then per path ``stat`` and the
observation check. Any tool that declares its path arguments gets the same
protection, third-party tools included. Size, binary and content checks come
after, inside the tool, under the same lease.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat as stat_mod
from typing import Any

import attrs

from .._fs.lease import WriterLease
from .._fs.observations import Absent, Present, open_to_read, read_version, version_of
from .._fs.workspace import ResolvedPath
from .._model.errors import ToolError
from .._model.spec import ToolSpec
from .._model.values import PathRole
from .._text.textio import decode_text, display, display_lines, is_binary
from .scope import FileScope

STALE_DETAIL_MAX_BYTES = 1 << 20
STALE_DETAIL_LINES = 30
STALE_DETAIL_CHARS = 2048


@attrs.frozen
class GatedPath:
    """A path argument the host gate has checked: confined, leased, stat'ed and observed.

    ``content`` is the file's bytes when the gate read them from the version ``stat``
    describes (checking a young observation); `FileAccess.load` then reads nothing again.
    """

    argument: str
    role: PathRole
    resolved: ResolvedPath
    stat: os.stat_result | None
    content: bytes | None = attrs.field(default=None, repr=False)

    @property
    def path(self) -> str:
        return self.resolved.path

    @property
    def display(self) -> str:
        return self.resolved.display


def not_found(display: str) -> ToolError:
    return ToolError(
        "not_found",
        f"FS_NOT_FOUND: {display} does not exist; create it only if needed",
        "FS_NOT_FOUND",
    )


def is_directory(display: str, recovery: str | None = None) -> ToolError:
    recovery = recovery or "list it with ls"
    return ToolError(
        "tool_error", f"FS_IS_DIRECTORY: {display} is a directory; {recovery}", "FS_IS_DIRECTORY"
    )


def not_regular(
    display: str, recovery: str | None = None, what: str = "not a regular file"
) -> ToolError:
    recovery = recovery or "use the shell for it"
    return ToolError(
        "tool_error", f"FS_NOT_REGULAR: {display} is {what}; {recovery}", "FS_NOT_REGULAR"
    )


def kind_of(st: os.stat_result) -> str:
    """What a non-regular file is, for messages."""
    mode = st.st_mode
    if stat_mod.S_ISLNK(mode):
        return "a symbolic link"
    if stat_mod.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat_mod.S_ISSOCK(mode):
        return "a socket"
    if stat_mod.S_ISCHR(mode) or stat_mod.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_observed(display: str) -> ToolError:
    return ToolError(
        "not_observed",
        f"FS_NOT_OBSERVED: {display} has not been read in this "
        "session; read any window of it with read_file, then retry",
        "FS_NOT_OBSERVED",
    )


def stale(display: str, detail: str | None = None) -> ToolError:
    text = (
        f"FS_STALE_VERSION: {display} changed after this session last read it; read it "
        "again (any window), then retry"
    )
    if detail:
        text += "\n" + detail
    return ToolError("stale_version", text, "FS_STALE_VERSION")


def open_for_writing(display: str) -> ToolError:
    """Stale: another program has the file open for writing, so replacing it now would lose
    what it writes next."""
    return ToolError(
        "stale_version",
        f"FS_STALE_VERSION: {display} is open for writing in "
        "another program (what it writes next would be lost); nothing was "
        "changed: retry once it is closed, reading it again first",
        "FS_STALE_VERSION",
    )


def changed_while_applying(display: str) -> ToolError:
    return ToolError(
        "stale_version",
        f"FS_STALE_VERSION: {display} changed while this change "
        "was being applied; read it again, then retry",
        "FS_STALE_VERSION",
    )


def removed_after_read(display: str) -> ToolError:
    return ToolError(
        "stale_version",
        f"FS_STALE_VERSION: {display} was removed after this "
        "session read it; read it again to confirm it is absent, then retry",
        "FS_STALE_VERSION",
    )


def io_error(display: str, exc: OSError) -> ToolError:
    reason = exc.strerror or str(exc)
    return ToolError(
        "tool_error",
        f"FS_IO: {display}: {reason}; check the path and its permissions, then retry",
        "FS_IO",
    )


def stale_detail(
    scope: FileScope, entry: Present, path: str | os.PathLike[str], st: os.stat_result | None
) -> str | None:
    """What changed since the observation: a small diff, or "only metadata" (files.md §5.6)."""
    if not scope.policy.stale_detail:
        return None
    if scope.denied(path):
        return None
    before = scope.ledger.snapshot(entry)
    if before is None or st is None or st.st_size > STALE_DETAIL_MAX_BYTES:
        return None
    try:
        fd = open_to_read(path)  # a ResolvedPath: beneath its root, like every read here
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(STALE_DETAIL_MAX_BYTES + 1)
    except OSError:
        return None
    if len(raw) > STALE_DETAIL_MAX_BYTES:
        return None
    # in the encoding the model settled for the version it saw, if it did: its snapshot is
    decoded = decode_text(raw, scope.declared(os.fspath(path), entry.encoding))
    if is_binary(raw, decoded.encoding):
        return None
    now = decoded.text
    if now == before:
        return "content is the same; only file metadata changed"
    diff = list(difflib.unified_diff(display_lines(before), display_lines(now), lineterm="", n=0))[
        2:
    ]
    added = sum(1 for d in diff if d.startswith("+"))
    removed = sum(1 for d in diff if d.startswith("-"))
    shown: list[str] = []
    size = 0
    for line in diff:
        if len(shown) >= STALE_DETAIL_LINES or size + len(line) + 1 > STALE_DETAIL_CHARS:
            shown.append(f"… (+{added}/-{removed} lines in total)")
            break
        shown.append(line)
        size += len(line) + 1
    if not shown:
        return "content is the same apart from line endings; only the bytes changed"
    return "changed since that read:\n" + display("\n".join(shown))


def _stat(target: ResolvedPath, shown: str) -> os.stat_result | None:
    """The entry's ``lstat`` in its held directory (canonical: no final link to follow)."""
    try:
        return target.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise io_error(shown, exc) from None


def check_paths(
    scope: FileScope,
    spec: ToolSpec,
    arguments: dict[str, Any],
    *,
    lease: WriterLease | None,
    dry_run: bool = False,
    expected_versions: dict[str, Any] | None = None,
) -> dict[str, GatedPath]:
    """Run the gate for every declared path argument (and every path ``mutated_paths``
    reads from the arguments); returns the gated paths.

    Order (files.md §6): confinement of every path, protection (`_files.protected`), the
    lease (acquired here, sorted; the caller releases it once the tool has recorded
    its new version), then per path in declaration order: stat (missing, directory,
    non-regular) and the observation. ``dry_run`` (previews) takes no lease
    and changes no ledger entry. ``expected_versions`` (an approved preview's)
    must still hold.
    """
    roles: list[tuple[PathRole, str]] = []
    for role in spec.mutates_paths:
        value = arguments.get(role.argument)
        if isinstance(value, str):
            roles.append((role, value))
    static = len(roles)
    if spec.mutated_paths is not None:
        roles.extend(spec.mutated_paths(arguments))
    resolved = [(role, scope.workspace.resolve(value, write=True)) for role, value in roles]
    for _role, rp in resolved:  # protected paths are refused before anything is touched
        scope.check_write(rp)
    if lease is not None:
        lease.paths = sorted({r.path for _, r in resolved})
        lease.acquire()
    # a rename onto its own canonical path skips the observation: the tool reports the no-op.
    # Only declared path arguments (move_file's two ends): the paths a patch names are
    # always observed, so a patch cannot skip the check by naming a file twice
    modified = {r.path for role, r in resolved[:static] if role.mode == "modify"}
    created = {r.path for role, r in resolved[:static] if role.mode == "create"}
    gated: dict[str, GatedPath] = {}
    for index, (role, rp) in enumerate(resolved):
        target = rp if role.follow_symlinks else scope.workspace.entry(rp, write=True)
        st = _stat(target, rp.display)
        if st is not None and role.mode != "create" and scope.denied(rp):
            raise not_found(rp.display)  # the read deny list: exactly like a missing file
        same_path = index < static and rp.path in (modified if role.mode == "create" else created)
        entry = scope.ledger.lookup(rp.path, st)
        if st is None:
            if role.mode == "modify":
                if not dry_run:
                    scope.ledger.record_absent(rp.path)
                raise not_found(rp.display)
            if isinstance(entry, Present) and not same_path:
                raise removed_after_read(rp.display)
            gated[role.argument] = GatedPath(role.argument, role, rp, None)
            continue
        if stat_mod.S_ISDIR(st.st_mode):
            raise is_directory(rp.display, role.recovery)
        if role.mode == "create":
            # an existing destination (even a dangling link) is the tool's to judge
            gated[role.argument] = GatedPath(role.argument, role, rp, st)
            continue
        if not stat_mod.S_ISREG(st.st_mode):
            raise not_regular(rp.display, role.recovery, kind_of(st))
        content = None
        if not same_path:
            content = _check_observed(scope, entry, rp.display, target, st)
        if expected_versions is not None:
            want = expected_versions.get(role.argument)
            if want is not None and tuple(want) != version_of(st):
                raise stale(rp.display)
        gated[role.argument] = GatedPath(
            role.argument, role, rp, st, content if target is rp else None
        )
    return gated


def _check_observed(
    scope: FileScope,
    entry: Present | Absent | None,
    display: str,
    path: ResolvedPath,
    st: os.stat_result,
) -> bytes | None:
    """Refuse unless ``entry`` proves this session saw the version ``st``: the same ``stat``
    and, for a version with a digest (every file up to `DIGEST_MAX_BYTES`), the same bytes,
    compared with the bytes the ledger kept or else hashed. The bytes read are returned
    when the read was of that very version (the tool's load then uses them instead of
    reading the file a second time)."""
    if entry is None or isinstance(entry, Absent):
        raise not_observed(display)
    if entry.version != version_of(st):
        raise stale(display, stale_detail(scope, entry, path, st))
    if entry.digest is None:
        return None
    kept = scope.ledger.content(entry)
    try:
        now, same_version = read_version(path, st, len(kept) if kept is not None else st.st_size)
    except OSError:
        now, same_version = None, False
    if now is None or (
        now != kept
        if kept is not None
        else len(now) != st.st_size or hashlib.sha256(now).hexdigest() != entry.digest
    ):
        raise stale(display, stale_detail(scope, entry, path, st))
    return now if same_version else None
