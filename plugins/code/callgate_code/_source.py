"""Reading one source file for parsing: regular files only, and never more than a cap.

A parse costs hundreds of times the file's size in memory (tree-sitter's tree
plus the symbols built from it), so ``[code] max_file_bytes`` bounds what one
call may parse; a FIFO, device or socket is refused without blocking (the open
is non-blocking and the type is checked on the descriptor, so a file swapped
for a FIFO after a directory walk is refused too). A confined path (a
`callgate.ResolvedPath`) is opened beneath its held root, never through a symlink.
"""

from __future__ import annotations

import os
import stat as stat_mod

from callgate import ToolError
from callgate.paths import READ_FLAGS, ResolvedPath

_KINDS = ((stat_mod.S_ISFIFO, "a FIFO"), (stat_mod.S_ISCHR, "a character device"),
          (stat_mod.S_ISBLK, "a block device"), (stat_mod.S_ISSOCK, "a socket"),
          (stat_mod.S_ISDIR, "a directory"))


def read_source(path: str | ResolvedPath, display: str, limit: int, tool: str
                ) -> tuple[bytes, os.stat_result]:
    """The bytes of regular file ``path`` (at most ``limit``) and its stat, or a `ToolError`."""
    try:
        fd = path.open(READ_FLAGS) if isinstance(path, ResolvedPath) else \
            os.open(path, READ_FLAGS)
    except OSError as exc:
        raise ToolError("tool_error", f"{tool}: cannot read {display}: {exc.strerror}",
                        "CODE_IO") from None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a file")
            raise ToolError("tool_error", f"{tool}: {display} is {kind}, not a regular file; "
                            "nothing was read", "CODE_NOT_REGULAR")
        if st.st_size > limit:
            raise _too_large(tool, display, st.st_size, limit)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while we read
            raise _too_large(tool, display, size, limit)
        return b"".join(chunks), st
    except OSError as exc:
        raise ToolError("tool_error", f"{tool}: cannot read {display}: {exc.strerror}",
                        "CODE_IO") from None
    finally:
        os.close(fd)


def _too_large(tool: str, display: str, size: int, limit: int) -> ToolError:
    return ToolError("tool_error", f"{tool}: {display} is {size:,} bytes, over the "
                     f"{limit:,}-byte limit for parsing ([code] max_file_bytes); use grep or "
                     "read_file with an offset instead", "CODE_TOO_LARGE")
