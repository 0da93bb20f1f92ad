"""Figure 3, stale detection: an outside change between a read and a structured mutation
is always refused, and the refusal leaves the file exactly as the outside change left it.

Each case makes a fresh file, reads it through the host, changes it from outside
(content change, same-size rewrite with the mtime put back, chmod, replacement by
rename, delete, delete-and-recreate, a new hard link), then asks one of edit_file,
write_file, multi_edit, delete_range or move_file to change it. Half the files are
"young" (written just before the read: the ledger keeps a digest) and half carry an
mtime from an hour ago (no digest: the stat version alone must catch the change).
"""

from __future__ import annotations

import os
import random
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_files

BODY = "alpha\nbeta\ngamma\ndelta\n"
SAME_SIZE = "ALPHA\nbeta\ngamma\ndelta\n"
CHANGES = ("append", "same_size_mtime_restored", "chmod", "rename_over", "rename_over_same",
           "delete", "delete_recreate", "delete_recreate_same_size", "hard_link")
TOOLS = ("edit_file", "write_file", "multi_edit", "delete_range", "move_file")


def state(path: Path) -> tuple[Any, ...] | None:
    """Everything a refusal must leave alone: bytes, mode, inode, links, mtime."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (path.read_bytes(), st.st_mode, st.st_ino, st.st_nlink, st.st_mtime_ns)


def change(kind: str, path: Path, rng: random.Random) -> None:
    """Change ``path`` the way another program would, behind the session's back."""
    st = os.stat(path)
    if kind == "append":
        with open(path, "a") as fh:
            fh.write("epsilon\n")
    elif kind == "same_size_mtime_restored":
        path.write_text(SAME_SIZE)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif kind == "chmod":
        os.chmod(path, stat.S_IMODE(st.st_mode) ^ rng.choice((0o100, 0o020, 0o004)))
    elif kind in ("rename_over", "rename_over_same"):
        other = path.with_name(path.name + ".new")
        other.write_text(BODY if kind == "rename_over_same" else SAME_SIZE)
        os.chmod(other, stat.S_IMODE(st.st_mode))
        os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.rename(other, path)
    elif kind == "delete":
        path.unlink()
    elif kind in ("delete_recreate", "delete_recreate_same_size"):
        path.unlink()
        path.write_text(SAME_SIZE if kind.endswith("same_size") else BODY + "zeta\n")
        os.chmod(path, stat.S_IMODE(st.st_mode))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif kind == "hard_link":
        os.link(path, path.with_name(path.name + ".link"))
    else:
        raise AssertionError(kind)


def attempt(s: Any, tool: str, rel: str) -> Any:
    args: dict[str, Any] = {
        "edit_file": {"path": rel, "old_string": "beta", "new_string": "BETA"},
        "write_file": {"path": rel, "content": "replaced\n"},
        "multi_edit": {"path": rel, "edits": [{"old_string": "gamma", "new_string": "G"}]},
        "delete_range": {"path": rel, "start_anchor": "beta", "end_anchor": "gamma"},
        "move_file": {"source_path": rel, "destination_path": rel + ".moved"},
    }[tool]
    return s.call(tool, args)


def expected_kinds(kind: str, tool: str) -> set[str]:
    if kind == "delete":  # nothing to change: a create would need a fresh look, an edit a file
        return {"stale_version"} if tool == "write_file" else {"not_found"}
    return {"stale_version"}


def test_outside_changes_between_read_and_edit_are_always_refused(
        callgate_session: Callable[..., Any], cases: Callable[[int, int], int],
        figure: Callable[..., None]) -> None:
    total = cases(1000, 90)
    rng = random.Random(1203)
    s = callgate_session(plugins=[callgate_files], config={"files": {"watch": False}})
    failures: list[str] = []
    tally: dict[str, int] = {}
    for i in range(total):
        kind, tool = CHANGES[i % len(CHANGES)], TOOLS[(i // len(CHANGES)) % len(TOOLS)]
        aged = rng.random() < 0.5
        rel = f"d{i % 17}/f{i}.txt"
        path = s.workspace / rel
        path.parent.mkdir(exist_ok=True)
        path.write_text(BODY)
        if aged:
            old = os.stat(path).st_mtime_ns - 3600 * 10**9
            os.utime(path, ns=(old, old))
        read = s.call("read_file", {"path": rel})
        assert not read.is_error, read.text
        change(kind, path, rng)
        before, names = state(path), sorted(os.listdir(path.parent))
        result = attempt(s, tool, rel)
        label = f"case {i}: {kind} then {tool} ({'aged' if aged else 'young'})"
        kinds = expected_kinds(kind, tool)
        if not result.is_error or result.error is None or result.error.kind not in kinds:
            failures.append(f"{label}: not refused: {result.text[:200]!r}")
        elif state(path) != before or sorted(os.listdir(path.parent)) != names:
            failures.append(f"{label}: refused but the file or its directory changed")
        else:
            tally[kind] = tally.get(kind, 0) + 1
    figure("stale detection", cases=total, refused=total - len(failures),
           failures=len(failures), by_change=tally)
    assert not failures, "\n".join(failures[:20])
