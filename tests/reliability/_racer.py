"""The confinement-race attack (issue 16, defect 1): a background process swaps a directory on
a tool's path for a symbolic link that leads outside the workspace, as fast as it can.

The arena: the workspace ``<sandbox>/w`` holds a real directory ``d`` (inside files) and a
symbolic link ``d_swap`` to ``<sandbox>/outside``; the racer exchanges the two names with
``renameat2(RENAME_EXCHANGE)`` (atomic: ``d`` is always one or the other), or with a
rename loop where the filesystem cannot exchange. Everything outside holds `MARK`, so a
read that reached outside shows in a result, and `tree_state` of the outside directory,
taken before and after, shows any write, creation, removal or rename there.

`RACER_SOURCE` is a standalone script: the model-only attack writes it with write_file
and starts it with bash, exactly as a model could.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
from callgate import ToolResult

MARK = "OUTSIDE-MARK-7f3a"
INSIDE = "inside text\n"
#: A pid above Linux's PID_MAX_LIMIT: never alive, so a temp tagged with it is stale.
DEAD_PID = 4194305
STALE = f".f.txt.callgate-{DEAD_PID}-0badf00d.tmp"

RACER_SOURCE = r'''"""Swap two directory entries until the time is up; print the number of swaps."""
import ctypes
import os
import sys
import time

a, b, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, "renameat2", None)
end = time.monotonic() + seconds
swaps = 0
while time.monotonic() < end:
    if exchange is not None and exchange(-100, a.encode(), -100, b.encode(), 2) == 0:
        swaps += 1
        continue
    exchange = None  # no RENAME_EXCHANGE here: the same swap with three renames
    try:
        os.rename(a, a + ".t")
        os.rename(b, a)
        os.rename(a + ".t", b)
        swaps += 1
    except OSError:
        pass
print(swaps, flush=True)
'''


@attrs.frozen
class Arena:
    sandbox: Path
    workspace: Path
    outside: Path

    @property
    def inside_dir(self) -> Path:
        return self.workspace / "d"


def build(sandbox: Path, extra_inside: dict[str, bytes] | None = None,
          extra_outside: dict[str, bytes] | None = None) -> Arena:
    """The workspace, the directory ``d`` the racer swaps, and the bait outside."""
    ws, outside = sandbox / "w", sandbox / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f.txt").write_text(INSIDE)
    (outside / "f.txt").write_text(f"{MARK}\n")
    (outside / STALE).write_text(f"{MARK} stale temp\n")
    for name, data in (extra_inside or {}).items():
        (ws / "d" / name).write_bytes(data)
    for name, data in (extra_outside or {}).items():
        (outside / name).write_bytes(data)
    os.symlink(outside, ws / "d_swap")
    return Arena(sandbox, ws, outside)


def tree_state(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry below ``root`` (and ``root`` itself): kind, bytes' digest, mode, inode,
    mtime. Any change outside shows as a difference."""
    out: dict[str, tuple[object, ...]] = {}
    for directory, dirs, files in os.walk(root):
        for name in ["", *dirs, *files]:
            full = os.path.join(directory, name) if name else directory
            if name == "" and directory != str(root):
                continue
            st = os.lstat(full)
            if os.path.islink(full):
                body: object = ("link", os.readlink(full))
            elif os.path.isdir(full):
                body = ("dir",)
            else:
                with open(full, "rb") as fh:
                    body = ("file", hashlib.sha256(fh.read()).hexdigest())
            out[os.path.relpath(full, root)] = (body, st.st_mode, st.st_ino, st.st_mtime_ns)
    return out


def differences(before: dict[str, tuple[object, ...]],
                after: dict[str, tuple[object, ...]]) -> list[str]:
    """What changed between two `tree_state`\\ s, one line per entry."""
    out = [f"added {k}" for k in sorted(set(after) - set(before))]
    out += [f"removed {k}" for k in sorted(set(before) - set(after))]
    out += [f"changed {k}" for k in sorted(set(before) & set(after)) if before[k] != after[k]]
    return out


@contextmanager
def swapping(a: Path, b: Path, seconds: float) -> Iterator[list[int]]:
    """Run the racer on ``a`` and ``b`` for at most ``seconds``; yields a list that holds the
    number of swaps it made once the block ends."""
    counted: list[int] = []
    proc = subprocess.Popen([sys.executable, "-c", RACER_SOURCE, str(a), str(b), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    try:
        yield counted
    finally:
        try:
            out, _ = proc.communicate(timeout=seconds + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        counted.append(int(out.strip() or 0))
        restore(a, b)


def restore(a: Path, b: Path) -> None:
    """Put the real directory back at ``a`` (the racer may stop at either position)."""
    if a.is_symlink() and not b.is_symlink():
        tmp = a.with_name(a.name + ".r")
        os.rename(a, tmp)
        os.rename(b, a)
        os.rename(tmp, b)
    leftover = a.with_name(a.name + ".t")  # a rename loop stopped halfway
    if (leftover.exists() or leftover.is_symlink()) and not os.path.lexists(a):
        os.rename(leftover, a)


def leaks(result: ToolResult, markers: Iterable[str]) -> bool:
    """Whether a result shows anything only the outside holds (text or image bytes)."""
    texts = [result.text.encode(), *(image.data for image in result.images)]
    return any(m.encode() in t for m in markers for t in texts)


def race(session: Any, arena: Arena, name: str, step: Callable[[Any, int], list[ToolResult]],
         seconds: float, figure: Callable[..., None], markers: Iterable[str] = (MARK,)
         ) -> dict[str, int]:
    """Run ``step(session, i)`` (returning its results) in a loop for ``seconds`` while the
    racer swaps ``d``; fail if any result leaked or anything outside changed; returns the
    counts (also recorded as a figure)."""
    markers = tuple(markers)
    before = tree_state(arena.outside)
    counts = {"calls": 0, "ok": 0, "refused": 0, "leaked": 0}
    with swapping(arena.inside_dir, arena.workspace / "d_swap", seconds) as swaps:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            for r in step(session, i):
                counts["calls"] += 1
                counts["refused" if r.is_error else "ok"] += 1
                counts["leaked"] += leaks(r, markers)
            i += 1
    changed = differences(before, tree_state(arena.outside))
    counts["swaps"] = swaps[0]
    counts["outside_effects"] = counts["leaked"] + len(changed)
    figure(f"confinement race: {name}", seconds=seconds, **counts)
    assert swaps[0] > 0, "the racer never swapped"
    assert counts["leaked"] == 0, f"{counts['leaked']} results showed outside bytes"
    assert changed == [], changed
    return counts
