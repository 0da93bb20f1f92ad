"""The baseline every edit benchmark compares edit_file with: a plain Python edit."""

from __future__ import annotations

import os


def plain_edit(path: str, old: str, new: str, sync_dir: bool = False) -> None:
    """Read, replace once, write a temp, fsync it, rename over; ``sync_dir`` also fsyncs
    the directory (what makes the rename itself durable, as callgate's publish does)."""
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8")
    data = text.replace(old, new, 1).encode("utf-8")
    tmp = path + ".plain.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    if sync_dir and os.name != "nt":
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
