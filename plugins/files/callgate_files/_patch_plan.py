"""apply_patch's plan: the whole patch applied in memory to the files the gate checked.

Every operation works on the state the ones before it left (Codex's order: a file added
and then updated, updated twice, or moved and then updated all work), so the plan is the
net change per file: created, replaced, moved or removed. Everything that can refuse
runs here, before a byte is written: the hunks (with which file, which hunk and the
closest region when one does not fit), "Add File never replaces a file", the edit
family's encoding checks, the size limit. Execution then only publishes.
"""

from __future__ import annotations

import json
from typing import Literal

import attrs
from callgate import PathRole, ToolContext, ToolError
from callgate.files import GatedPath, SourceFile, binary_error, too_large, version_of
from callgate.text import bom_of, display, encode_text
from callgate_toolkit.diffs import OUTPUT_DIFF_CHARS, ChangeDiff, FilePreview, change_diff

from ._common import fail
from ._encoding import DECLARATION_CHARS, check_declaration, check_inserted, create_encoding
from ._hunks import FUZZ, FileLines, Miss, locate
from ._matching import Edited
from ._v4a import AddFile, DeleteFile, Operation, PatchError, UpdateFile, parse_patch

#: what the gate advises for a directory or a special file named in a patch
RECOVERY = "apply_patch changes regular files only; use the shell for this one"
SNAPSHOT_BYTES = 1 << 20
REGION_LINES = 8
SHOWN_CHARS = 160


def path_roles(operations: tuple[Operation, ...]) -> list[tuple[PathRole, str]]:
    """The gate's ``(role, path)`` for each path the patch names (``ctx.gated`` keys
    ``patch:1``, ``patch:2``... in order of first mention).

    The first mention decides what must be there: a file to update or delete has to exist
    and be observed (``modify``); an added file or a move's destination is a new name
    (``create``). A path the patch deletes or moves away is taken as the name itself
    (a symlink is not followed to its target); an updated one is followed, as edit_file
    follows it.
    """
    first: dict[str, str] = {}
    taken: set[str] = set()
    for operation in operations:
        mentions: list[tuple[str, str]]
        if isinstance(operation, AddFile):
            mentions = [(operation.path, "create")]
        elif isinstance(operation, DeleteFile):
            mentions = [(operation.path, "modify")]
            taken.add(operation.path)
        else:
            mentions = [(operation.path, "modify")]
            if operation.move_to is not None and operation.move_to != operation.path:
                taken.add(operation.path)
                mentions.append((operation.move_to, "create"))
        for path, mode in mentions:
            first.setdefault(path, mode)
    return [(PathRole(f"patch:{i}", mode,  # type: ignore[arg-type]
                      follow_symlinks=mode == "modify" and path not in taken,
                      recovery=RECOVERY), path)
            for i, (path, mode) in enumerate(first.items(), 1)]


def operations_of(patch: str) -> tuple[Operation, ...]:
    try:
        return parse_patch(patch)
    except PatchError as exc:
        raise fail("PATCH_INVALID", f"{exc}; nothing was changed", "invalid_arguments") \
            from None


@attrs.define(eq=False)
class _File:
    """One file (a canonical path) while the patch is planned.

    ``exists``: what the patch has left there so far; ``text`` its content (``None``
    while an existing file has not been read); ``basis``: the file whose encoding the
    text is in (``None``: new content, encoded like a new file); ``origin``: the file a
    move took the content from.
    """

    gated: GatedPath
    exists: bool
    source: SourceFile | None = None
    text: str | None = None
    basis: SourceFile | None = None
    origin: _File | None = None
    edits: list[Edited] = attrs.field(factory=list)
    fuzz: int = 0
    added: bool = False
    touched: bool = False

    @property
    def display(self) -> str:
        return self.gated.display

    @property
    def on_disk(self) -> bool:
        return self.gated.stat is not None


@attrs.frozen
class FileChange:
    """The net change to one file: ``kind`` ``add``, ``update``, ``move`` (the
    destination; its source is a separate ``delete`` with ``moved`` set) or ``delete``."""

    kind: Literal["add", "update", "move", "delete"]
    gated: GatedPath
    source: SourceFile | None
    data: bytes | None
    text: str | None
    diff: ChangeDiff | None
    origin: str | None = None
    fuzz: int = 0
    moved: bool = False

    @property
    def display(self) -> str:
        return self.gated.display

    @property
    def unchanged(self) -> bool:
        return self.source is not None and self.data == self.source.data


@attrs.frozen
class Plan:
    """Writes (creates, replaces) in patch order, then removals."""

    writes: tuple[FileChange, ...]
    removals: tuple[FileChange, ...]

    def summary(self) -> str:
        """Codex's success lines (``A``, ``M``, ``D``) and each file's diff."""
        changes = [*self.writes, *self.removals]
        lines = ["Success. Updated the following files:"]
        lines += [f"A {c.display}" for c in changes if c.kind == "add"]
        for c in changes:
            if c.kind not in ("update", "move"):
                continue
            notes = [f"moved from {c.origin}"] if c.kind == "move" else []
            if c.unchanged:
                notes.append("no change: it already had this content")
            if c.fuzz:
                notes.append(f"matched with {FUZZ[c.fuzz]}")
            lines.append(f"M {c.display}" + (f" ({'; '.join(notes)})" if notes else ""))
        lines += [f"D {c.display}" for c in changes if c.kind == "delete" and not c.moved]
        diffs = [c.diff.for_output(OUTPUT_DIFF_CHARS) for c in changes
                 if c.diff is not None and c.diff.text]
        return "\n".join(lines) + ("\n\n" + "\n".join(diffs) if diffs else "")

    def previews(self) -> list[FilePreview]:
        """One preview per file, as an approver sees the change."""
        out = []
        for c in (*self.writes, *self.removals):
            if c.moved:
                continue
            old = c.source.data if c.source is not None else None
            kind = {"add": "create", "update": "modify", "move": "rename",
                    "delete": "delete"}[c.kind]
            if c.kind == "update" and c.unchanged:
                kind = "noop"
            stat = c.gated.stat
            out.append(FilePreview(
                kind=kind,  # type: ignore[arg-type]
                path=c.origin if c.kind == "move" and c.origin else c.display,
                destination=c.display if c.kind == "move" else None,
                old_bytes=old, new_bytes=c.data,
                diff=c.diff.text if c.diff is not None else None,
                added=c.diff.added if c.diff is not None else 0,
                removed=c.diff.removed if c.diff is not None else 0,
                base_version=version_of(stat) if stat is not None else None))
        return out


class Planner:
    """Applies a patch's operations, in order, to the files in memory."""

    def __init__(self, ctx: ToolContext, operations: tuple[Operation, ...]) -> None:
        self.ctx = ctx
        self.operations = operations
        self.keys = {path: role.argument for role, path in path_roles(operations)}
        self.files: dict[str, _File] = {}

    def plan(self) -> Plan:
        for operation in self.operations:
            if isinstance(operation, AddFile):
                self._add(operation)
            elif isinstance(operation, DeleteFile):
                self._delete(operation)
            else:
                self._update(operation)
        return self._net()

    # --- the operations ------------------------------------------------------------

    def _file(self, path: str) -> _File:
        key = self.keys.get(path)
        gated = self.ctx.gated.get(key) if key is not None else None
        if gated is None:  # the gate checked every path the patch names
            raise fail("PATCH_INVALID", f"{path} was not checked by the host gate; nothing "
                       "was changed")
        found = self.files.get(gated.path)
        if found is None:
            found = self.files[gated.path] = _File(gated, gated.stat is not None)
        return found

    def _read(self, f: _File, path: str, text_needed: bool) -> None:
        """Read the file on disk, once, for an operation that needs what is there (a
        delete takes a binary file too)."""
        if f.source is not None or not f.on_disk or not f.exists:
            return
        role = self.ctx.gated[self.keys[path]].role
        if role.mode != "modify":  # never reached: the first mention of it was a modify
            raise fail("FS_NOT_OBSERVED", f"{f.display} has not been read in this session; "
                       "read any window of it with read_file, then retry", "not_observed")
        try:
            f.source = self.ctx.files.load(f.gated, tool="apply_patch")
        except ToolError as exc:
            if text_needed or exc.signature != "FS_BINARY":
                raise
            f.source = self.ctx.files.load(f.gated, tool="apply_patch", decode=False)
        if f.source.decoded is not None:
            f.text, f.basis = f.source.text, f.source

    def _add(self, op: AddFile) -> None:
        f = self._file(op.path)
        if f.exists:
            how = ("was already added by this patch" if f.added else "was moved here by this "
                   "patch" if f.origin is not None else "already exists")
            raise fail("FS_ALREADY_EXISTS", f"{f.display} {how} (patch line {op.line}); "
                       "*** Add File never replaces a file: to change it, read it and use "
                       "*** Update File (or *** Delete File, then *** Add File); nothing "
                       "was changed", "already_exists")
        f.exists, f.text, f.basis, f.origin, f.added = True, op.content, None, None, True
        f.edits, f.touched = [], True

    def _delete(self, op: DeleteFile) -> None:
        f = self._file(op.path)
        self._require(f, op.path, op.line, text_needed=False)
        f.exists, f.text, f.basis, f.origin, f.added = False, None, None, None, False
        f.edits, f.touched = [], True

    def _require(self, f: _File, path: str, line: int, text_needed: bool) -> None:
        if not f.exists:
            gone = "was already deleted or moved away by this patch" if f.touched else \
                "does not exist"
            raise ToolError("not_found", f"FS_NOT_FOUND: {f.display} {gone} (patch line "
                            f"{line}); nothing was changed", "FS_NOT_FOUND")
        self._read(f, path, text_needed)

    def _update(self, op: UpdateFile) -> None:
        f = self._file(op.path)
        self._require(f, op.path, op.line, text_needed=True)
        if f.text is None:  # a binary file is read only to be deleted
            raise binary_error(f.display, "apply_patch")
        text = self._apply(f, op)
        f.touched = True
        if op.move_to is None:
            f.text = text
            return
        dest = self._file(op.move_to)
        if dest is f:  # moved onto its own name: an update
            f.text = text
            return
        if dest.exists:
            how = "already exists" if not dest.added else "was added by this patch"
            raise fail("FS_ALREADY_EXISTS", f"{dest.display} {how} (patch line {op.line}, "
                       f"*** Move to); a move never replaces a file: pick another name, or "
                       "delete that file first in the patch; nothing was changed",
                       "already_exists")
        dest.exists, dest.text, dest.basis, dest.added = True, text, f.basis, False
        dest.origin, dest.touched = f.origin or f, True
        dest.edits = list(f.edits)
        dest.fuzz = max(dest.fuzz, f.fuzz)
        f.exists, f.text, f.basis, f.origin = False, None, None, None
        f.edits = []

    def _apply(self, f: _File, op: UpdateFile) -> str:
        """The file's text with the update's chunks applied, after the edit family's
        encoding checks; `Miss` becomes ``FS_NO_MATCH`` with the closest region."""
        assert f.text is not None
        lines = FileLines(f.text)
        try:
            located = locate(lines, op.chunks)
        except Miss as miss:
            raise _no_match(f.display, op, lines, miss) from None
        edited = Edited(f.text, located.pieces, len(located.pieces), located.fuzz > 0)
        if f.basis is not None:
            check_inserted(f.basis, edited.inserted(), f"{f.display}: ")
            check_declaration(f.basis, edited.head(DECLARATION_CHARS))
        f.edits.append(edited)
        f.fuzz = max(f.fuzz, located.fuzz)
        return edited.text

    # --- the net change --------------------------------------------------------------

    def _net(self) -> Plan:
        writes: list[FileChange] = []
        removals: list[FileChange] = []
        for f in self.files.values():
            if f.on_disk and not f.exists:
                assert f.source is not None
                moved = any(g.origin is f and g.exists for g in self.files.values())
                removals.append(FileChange("delete", f.gated, f.source, None, None,
                                           None if moved else _removed_diff(f), moved=moved))
            elif f.exists and f.text is not None:
                writes.append(self._write(f))
        return Plan(tuple(writes), tuple(removals))

    def _write(self, f: _File) -> FileChange:
        assert f.text is not None
        data = self._encode(f)
        limit = self.ctx.files.max_edit_bytes
        if len(data) > limit:
            raise too_large(f.display, len(data), limit, content=True)
        text = f.text if len(data) <= SNAPSHOT_BYTES else None
        # what is on disk now at that name (a file the patch deleted, then wrote again) is
        # replaced; a name with nothing there is created
        replaced = f.source if f.on_disk else None
        assert replaced is not None or not f.on_disk
        if f.origin is not None:
            origin = f.origin.source
            old = origin.text if origin is not None and origin.decoded is not None else ""
            diff = _relabel(change_diff(old, f.text, f.display), f.origin.display, f.display)
            return FileChange("move", f.gated, replaced, data, text, diff, f.origin.display,
                              f.fuzz)
        if replaced is None:
            return FileChange("add", f.gated, None, data, text, change_diff(None, f.text,
                                                                           f.display))
        return FileChange("update", f.gated, replaced, data, text, self._diff(f), fuzz=f.fuzz)

    def _encode(self, f: _File) -> bytes:
        assert f.text is not None
        basis = f.basis
        if basis is None:
            declared = self.ctx.files.declared_encoding(f.gated.resolved)
            return encode_text(f.text, create_encoding(declared, f.text, f.display))
        if len(f.edits) == 1 and f.origin is None and basis is f.source:
            bom = len(bom_of(basis.encoding))
            if basis.encoding in ("utf-8", "utf-8-bom") and \
                    len(basis.data) - bom == len(basis.text):
                # ASCII: character i is byte bom + i, so only the pieces need encoding
                return f.edits[0].splice(basis.data, bom, basis.encode_piece)
        return basis.encode(f.text)

    def _diff(self, f: _File) -> ChangeDiff:
        assert f.source is not None and f.text is not None
        if len(f.edits) == 1 and f.source.decoded is not None and \
                f.edits[0].base is f.source.text:
            old_region, new_region, first_line = f.edits[0].region()
            return change_diff(old_region, new_region, f.display, first_line=first_line)
        old = f.source.text if f.source.decoded is not None else ""
        return change_diff(old, f.text, f.display)


def _removed_diff(f: _File) -> ChangeDiff:
    source = f.source
    assert source is not None
    if source.decoded is None:
        return ChangeDiff(f"(deleted {f.display}: binary, {len(source.data):,} bytes)", 0, 0)
    diff = change_diff(source.text, "", f.display)
    return ChangeDiff(diff.text.replace(f"+++ b/{f.display}", "+++ /dev/null", 1),
                      diff.added, diff.removed)


def _relabel(diff: ChangeDiff, origin: str, destination: str) -> ChangeDiff:
    if not diff.text.startswith("--- "):
        return ChangeDiff(f"(moved {origin} to {destination} unchanged)", 0, 0) \
            if not diff.text else diff
    return ChangeDiff(diff.text.replace(f"--- a/{destination}", f"--- a/{origin}", 1),
                      diff.added, diff.removed)


def _shown(text: str) -> str:
    text = display(text)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


def _no_match(path: str, op: UpdateFile, lines: FileLines, miss: Miss) -> ToolError:
    """``FS_NO_MATCH``: which file, which hunk, the closest region and its first
    difference, and how to recover."""
    chunk = op.chunks[miss.chunk]
    where = f"hunk {miss.chunk + 1} of {len(op.chunks)} (patch line {chunk.line})"
    after = f"after line {miss.after}" if miss.after else "in the file"
    if miss.what == "context":
        what = f"its @@ line {_shown(chunk.context or '')} was not found {after}"
        pattern: tuple[str, ...] = (chunk.context or "",)
        at: tuple[int, ...] = (chunk.line,)
    elif miss.what == "overlap":
        what = "it overlaps the hunk before it (hunks must follow each other down the file)"
        pattern, at = chunk.old, chunk.old_at
    else:
        eof = " at the end of the file (the hunk ends with *** End of File)" \
            if chunk.end_of_file else f" {after}"
        what = f"its ' ' and '-' lines were not found{eof}"
        pattern, at = chunk.old, chunk.old_at
    message = (f"FS_NO_MATCH: the patch does not apply to {path}: {where}: {what}; no file "
               "was changed")
    start = lines.closest(pattern, miss.after) if pattern else None
    if start is not None:
        message += "\n" + _region(path, lines, pattern, at, start)
    else:
        message += f"\nno lines like them are in {path}"
    message += ("\nread that part of the file again, make the hunk's ' ' and '-' lines match "
                "it exactly, then send the whole patch again")
    return ToolError("tool_error", message, "FS_NO_MATCH")


def _region(path: str, lines: FileLines, pattern: tuple[str, ...], at: tuple[int, ...],
            start: int) -> str:
    """The closest region, numbered like read_file, and its first difference."""
    count = len(lines)
    first = max(0, min(start, count - 1) - 1)  # and a line around it, for orientation
    last = min(count, max(start + len(pattern), first + 1) + 1, first + REGION_LINES)
    width = len(str(last))
    rows = [f"{n + 1:>{width}}→{display(lines.texts[n])[:SHOWN_CHARS]}"
            for n in range(first, last)]
    out = [f"closest region: lines {first + 1}-{last} of {path}", *rows]
    for j, want in enumerate(pattern):
        n = start + j
        line = at[j] if j < len(at) else None
        said = f"patch line {line} has" if line is not None else "the patch has"
        if n < 0 or n >= count:
            out.append(f"{said} {_shown(want)} where the file has no line {n + 1}")
            break
        if lines.texts[n] != want:
            out.append(f"{said} {_shown(want)} where line {n + 1} has "
                       f"{_shown(lines.texts[n])}")
            break
    return "\n".join(out)
