"""The apply_patch format (Codex's V4A envelope): a patch text parsed into file operations.

::

    *** Begin Patch
    *** Add File: path            then its lines, each starting with "+"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path         (optional)
    @@ optional context line      then " " context, "-" removed and "+" added lines
    *** End of File               (optional: the chunk ends the file)
    *** End Patch

The grammar and its leniencies are Codex's (codex-rs/apply-patch, ``parser.rs``,
lenient mode), so a patch a Codex-trained model writes parses here exactly as it does
there: markers may carry surrounding whitespace, a ``<<'EOF'`` heredoc wrapper is
dropped, the first chunk of an update may start without ``@@``, blank lines between
chunks are skipped and an empty line inside a chunk is an empty context line. No Python
library parses this format faithfully (checked: ``codex-apply-patch`` is a cp311-only
binary build of an old Codex; ``apply-patch-py`` needs Python 3.13 and adds its own
fallbacks; ``openai-agents``' ``apply_diff`` reads only the Responses API's per-file diffs,
with other anchor rules), so this module is a port of the grammar, not of the code.

Errors are `PatchError`: Codex's message and the patch line it is about (1 = the line
``*** Begin Patch`` is on, counted in the text as sent).
"""

from __future__ import annotations

import functools

import attrs

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"
CONTEXT = "@@ "
BARE_CONTEXT = "@@"
HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')

#: What Rust's ``char::is_whitespace`` (the White_Space property) counts, for ``trim``:
#: Python's ``str.strip()`` would also strip U+001C..U+001F.
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


class PatchError(ValueError):
    """A patch that does not parse: ``message`` (Codex's wording) and the patch ``line``."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        if self.line is None:
            return f"invalid patch: {self.message}"
        return f"invalid patch hunk on line {self.line}: {self.message}"


@attrs.frozen
class Chunk:
    """One ``@@`` section of an update: the lines it replaces and their replacement.

    ``context`` is the text after ``@@ `` (a line to find first, e.g. a ``def``);
    ``kept`` holds ``(old index, new index)`` of each context line (``" "`` or empty),
    which stays as the file has it; ``end_of_file``: ``old`` must end the file.
    ``line`` is the patch line the chunk starts on, ``old_at`` the patch line of each
    old line (for messages).
    """

    context: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    kept: tuple[tuple[int, int], ...]
    end_of_file: bool
    line: int
    old_at: tuple[int, ...] = ()


@attrs.frozen
class AddFile:
    path: str
    content: str
    line: int


@attrs.frozen
class DeleteFile:
    path: str
    line: int


@attrs.frozen
class UpdateFile:
    path: str
    move_to: str | None
    chunks: tuple[Chunk, ...]
    line: int


Operation = AddFile | DeleteFile | UpdateFile


def trim(text: str) -> str:
    return text.strip(WHITESPACE)


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split at ``\\n``, one ``\\r`` before it dropped."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


@functools.lru_cache(maxsize=32)
def parse_patch(text: str) -> tuple[Operation, ...]:
    """The operations of a patch, in order; `PatchError` when it does not parse.

    Cached: validation, the permission rules, the gate and the tool all read the same
    patch of a call."""
    stripped = trim(text)
    # lines are numbered in the text as sent: what trim() dropped before the first line
    first_line = text[: len(text) - len(text.lstrip(WHITESPACE))].count("\n") + 1
    lines = _lines(stripped) if stripped else []
    body, first_line = _body(lines, first_line)
    operations: list[Operation] = []
    index = 0
    while index < len(body):
        operation, used = _operation(body, index, first_line + 1 + index)
        operations.append(operation)
        index += used
    return tuple(operations)


def _body(lines: list[str], first_line: int) -> tuple[list[str], int]:
    """The lines between the markers, and the patch line ``*** Begin Patch`` is on."""
    try:
        _check_markers(lines)
        return lines[1:-1], first_line
    except PatchError:
        if len(lines) >= 4 and lines[0] in HEREDOC_STARTS and lines[-1].endswith("EOF"):
            inner = lines[1:-1]
            _check_markers(inner)
            return inner[1:-1], first_line + 1
        raise


def _check_markers(lines: list[str]) -> None:
    first = trim(lines[0]) if lines else None
    last = trim(lines[-1]) if lines else None
    if first == BEGIN and last == END and len(lines) > 1:
        return
    if first is not None and first != BEGIN:
        raise PatchError("The first line of the patch must be '*** Begin Patch'")
    raise PatchError("The last line of the patch must be '*** End Patch'")


def _operation(lines: list[str], start: int, line: int) -> tuple[Operation, int]:
    """The operation whose header is ``lines[start]`` (patch line ``line``), and how many
    lines it takes."""
    header = trim(lines[start])
    if header.startswith(ADD):
        content: list[str] = []
        for text in lines[start + 1:]:
            if not text.startswith("+"):
                break
            content.append(text[1:] + "\n")
        return AddFile(header[len(ADD):], "".join(content), line), 1 + len(content)
    if header.startswith(DELETE):
        return DeleteFile(header[len(DELETE):], line), 1
    if header.startswith(UPDATE):
        path = header[len(UPDATE):]
        index = start + 1
        move_to = None
        if index < len(lines) and lines[index].startswith(MOVE):
            move_to = lines[index][len(MOVE):]
            index += 1
        chunks: list[Chunk] = []
        while index < len(lines):
            text = lines[index]
            if not trim(text):  # blank lines between chunks
                index += 1
                continue
            if text.startswith("*"):
                break
            chunk, used = _chunk(lines, index, line + index - start, not chunks)
            chunks.append(chunk)
            index += used
        if not chunks:
            raise PatchError(f"Update file hunk for path '{path}' is empty", line)
        return UpdateFile(path, move_to, tuple(chunks), line), index - start
    raise PatchError(f"'{header}' is not a valid hunk header. Valid hunk headers: "
                     "'*** Add File: {path}', '*** Delete File: {path}', "
                     "'*** Update File: {path}'", line)


def _chunk(lines: list[str], start: int, line: int,
           first: bool) -> tuple[Chunk, int]:
    """One chunk from ``lines[start]`` (patch line ``line``); only the first chunk of an
    update may leave out its ``@@`` line."""
    head = lines[start]
    if head == BARE_CONTEXT:
        context, skip = None, 1
    elif head.startswith(CONTEXT):
        context, skip = head[len(CONTEXT):], 1
    elif first:
        context, skip = None, 0
    else:
        raise PatchError(f"Expected update hunk to start with a @@ context marker, got: "
                         f"'{head}'", line)
    if start + skip >= len(lines):
        raise PatchError("Update hunk does not contain any lines", line + 1)
    old: list[str] = []
    new: list[str] = []
    kept: list[tuple[int, int]] = []
    old_at: list[int] = []
    end_of_file = False
    parsed = 0
    for text in lines[start + skip:]:
        if text == END_OF_FILE:
            if parsed == 0:
                raise PatchError("Update hunk does not contain any lines", line + 1)
            end_of_file = True
            parsed += 1
            break
        mark = text[:1]
        if mark in ("", " "):
            kept.append((len(old), len(new)))
            old_at.append(line + skip + parsed)
            old.append(text[1:])
            new.append(text[1:])
        elif mark == "+":
            new.append(text[1:])
        elif mark == "-":
            old_at.append(line + skip + parsed)
            old.append(text[1:])
        else:
            if parsed == 0:
                raise PatchError(f"Unexpected line found in update hunk: '{text}'. Every line "
                                 "should start with ' ' (context line), '+' (added line), or "
                                 "'-' (removed line)", line + skip)
            break  # the next chunk's @@ line
        parsed += 1
    return Chunk(context, tuple(old), tuple(new), tuple(kept), end_of_file, line,
                 tuple(old_at)), parsed + skip


def paths_of(operations: tuple[Operation, ...]) -> list[str]:
    """Every path the operations name (move destinations too), each once, in order."""
    seen: dict[str, None] = {}
    for operation in operations:
        seen.setdefault(operation.path)
        if isinstance(operation, UpdateFile) and operation.move_to is not None:
            seen.setdefault(operation.move_to)
    return list(seen)
