"""Figure 1, confinement: hypothesis-generated paths against every path-taking tool never
read or write anything outside the workspace.

The workspace ``W = <sandbox>/w/proj`` sits in a sandbox full of bait: prefix and
look-alike siblings (``proj-2``, ``Proj``, ``proј`` with a Cyrillic j, ``proj\\u200b``,
``proj.``), a symlinked directory, a symlinked file, a dangling symlink and a
symlinked parent pointing out, a hard link whose other name lives outside. Every file
outside holds the marker ``TOPSECRET``, and every outside directory holds a file whose
name no generated path mentions, so a read shows up as the marker and a listing as that
name. Generated paths only ever lead into the sandbox (their lexical form stays inside
it and every symlink points into it), so even a broken guard could not touch anything
else on the machine. After each case:

- nothing outside ``W`` changed (bytes, mode, inode, mtime; no entry added or removed);
- no result text holds the marker or an unlisted name, no image block holds outside bytes;
- a call whose path an independent oracle places outside ``W`` did not succeed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from callgate.results import ImageBlock
from hypothesis import given
from hypothesis import strategies as st

from ._hypo import fixed

MARK = "TOPSECRET"
UNLISTED = "zz-unlisted-name-4c1d"
BODY = "alpha\nbeta\ngamma\n"
SIBLINGS = ("proj-2", "Proj", "PROJ", "pro\u0458", "proj\u200b", "proj.", "proj ")
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
                    "0000000c4944415408d763f8cfc000000301010018dd8db40000000049454e44ae426082")
COMPONENTS = ("..", "..", "..", ".", "", "a.txt", "sub", "b.txt", "new.txt", "nb.ipynb",
              "in.png", "pic.png", "out_dir", "out_file", "dangling", "dangling_in", "in_link",
              "parent_link", "hard.txt", "w", "proj", *SIBLINGS, "outside", "secret.txt",
              "x.txt", "a\x00b", "\x00", "\udcff", "caf\u00e9", "cafe\u0301", "A.TXT", "~",
              "$HOME", "x" * 300, "sub/", "./", "a.txt/")
PATH_TOOLS = ("read_file", "view_image", "ls", "glob", "grep", "present", "code_index",
              "write_file", "edit_file", "multi_edit", "delete_range", "notebook_edit",
              "move_file", "delete_symbol", "apply_patch", "insert_lines")
MUTATORS = {"write_file", "edit_file", "multi_edit", "delete_range", "notebook_edit",
            "move_file", "delete_symbol", "apply_patch", "insert_lines"}
#: what a patch header's path is once its line is trimmed (Rust's trim, as the parser does)
PATCH_TRIM = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


def build(sandbox: Path) -> Path:
    """The workspace and its bait; returns the workspace."""
    ws = sandbox / "w" / "proj"
    outside = sandbox / "outside"
    for d in (ws / "sub", outside, *(sandbox / "w" / s for s in SIBLINGS)):
        d.mkdir(parents=True, exist_ok=True)
    for d in (sandbox, sandbox / "w", outside, *(sandbox / "w" / s for s in SIBLINGS)):
        (d / UNLISTED).write_text(f"{MARK} listed\n")
    for d in (outside, *(sandbox / "w" / s for s in SIBLINGS)):
        (d / "secret.txt").write_text(f"{MARK}\n{BODY}")
        (d / "x.txt").write_text(f"{MARK}\n{BODY}")
        (d / "a.txt").write_text(f"{MARK}\n{BODY}")
        (d / "nb.ipynb").write_text(NOTEBOOK.replace('"metadata": {}',
                                                     f'"metadata": {{"m": "{MARK}"}}'))
    (outside / "pic.png").write_bytes(PNG + MARK.encode())
    (outside / "hl.txt").write_text(BODY)  # shares its inode with W/hard.txt
    populate(ws, sandbox)
    return ws


def populate(ws: Path, sandbox: Path) -> None:
    outside = sandbox / "outside"
    (ws / "a.txt").write_text(BODY)
    (ws / "sub" / "b.txt").write_text(BODY)
    (ws / "nb.ipynb").write_text(NOTEBOOK)
    (ws / "in.png").write_bytes(PNG)
    (ws / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    os.symlink(sandbox / "w" / "proj-2", ws / "out_dir")
    os.symlink(outside / "secret.txt", ws / "out_file")
    os.symlink(outside / "nope.txt", ws / "dangling")
    os.symlink(ws / "missing.txt", ws / "dangling_in")
    os.symlink(ws / "a.txt", ws / "in_link")
    os.symlink(sandbox / "w", ws / "parent_link")
    os.link(outside / "hl.txt", ws / "hard.txt")


def outside_state(sandbox: Path, ws: Path) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for root, dirs, files in os.walk(sandbox):
        if Path(root) == ws.parent:
            dirs[:] = [d for d in dirs if d != ws.name]
        for name in dirs + files:
            full = os.path.join(root, name)
            st = os.lstat(full)
            data: Any = os.readlink(full) if os.path.islink(full) else \
                Path(full).read_bytes() if os.path.isfile(full) else b""
            out[os.path.relpath(full, sandbox)] = (data, st.st_mode, st.st_ino,
                                                   st.st_mtime_ns if not os.path.isdir(full)
                                                   else 0)
    return out


def oracle_outside(ws: Path, path: str) -> bool:
    """Independent of the core: clean the path lexically, let the kernel resolve the links
    (``realpath``), then compare whole components with the workspace."""
    if "\x00" in path:
        return True
    parts = path.split("/") if path.startswith("/") else [*str(ws).split("/"), *path.split("/")]
    clean: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if clean:
                clean.pop()
        else:
            clean.append(part)
    real = os.path.realpath("/" + "/".join(clean)).split("/")
    return real[:len(ws.parts)] != ["", *ws.parts[1:]]


def paths(sandbox: Path, ws: Path) -> st.SearchStrategy[str]:
    prefixes = st.sampled_from(["", "", "", f"{ws}/", f"{ws.parent}/", f"{sandbox}/",
                                f"{ws}//", f"{ws}/../proj/"])
    tail = st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=6).map("/".join)

    def within_sandbox(p: str) -> bool:
        clean = os.path.normpath(os.path.join(ws, p.replace("\x00", "")))
        return clean == str(sandbox) or clean.startswith(str(sandbox) + "/")

    return st.builds(lambda a, b: a + b, prefixes, tail).filter(
        lambda p: 0 < len(p) <= 4096).filter(within_sandbox)


def arguments(tool: str, p: str, other: str, swap: bool = False) -> dict[str, Any]:
    if tool == "apply_patch":  # swap: add a file at p; else update p and move it to other
        body = f"*** Add File: {p}\n+written" if swap else \
            f"*** Update File: {p}\n*** Move to: {other}\n@@\n-beta\n+BETA"
        return {"patch": f"*** Begin Patch\n{body}\n*** End Patch"}
    return {
        "read_file": {"path": p},
        "view_image": {"path": p},
        "ls": {"path": p, "recursive": True},
        "glob": {"pattern": "**/*", "path": p},
        "grep": {"pattern": f"{MARK}|alpha", "path": p},
        "present": {"files": [{"path": p}]},
        "code_index": {"action": "outline", "path": p},
        "write_file": {"path": p, "content": "written\n"},
        "edit_file": {"path": p, "old_string": "beta", "new_string": "BETA"},
        "multi_edit": {"path": p, "edits": [{"old_string": "gamma", "new_string": "G"}]},
        "delete_range": {"path": p, "start_anchor": "alpha", "end_anchor": "beta"},
        "insert_lines": {"path": p, "line": 1, "text": "inserted"},
        "notebook_edit": {"path": p, "edit_mode": "insert", "cell_type": "code",
                          "new_source": "x = 1"},
        "move_file": {"source_path": p, "destination_path": other},
        "delete_symbol": {"path": p, "name": "f"},
    }[tool]


def leaked(result: Any, outside_png: bytes) -> str | None:
    text = result.text
    if MARK in text:
        return "marker in the result"
    if UNLISTED in text:
        return "an outside directory was listed"
    for block in result.content if isinstance(result.content, list) else []:
        if isinstance(block, ImageBlock) and bytes(block.data) == outside_png:
            return "outside image bytes returned"
    return None


def test_generated_paths_never_reach_outside_the_workspace(
        callgate_session: Callable[..., Any], tmp_path: Path,
        cases: Callable[[int, int], int], figure: Callable[..., None]) -> None:
    total = cases(10_000, 300)
    sandbox = tmp_path.resolve() / "sbx"
    ws = build(sandbox)
    s = callgate_session(entrypoints=["files", "search", "media", "workflow", "code"],
                         workspace=ws, config={"files": {"watch": False},
                                               "search": {"timeout_s": 5}})
    tools = [t for t in PATH_TOOLS if t in s.session.available_tools()]
    baseline = outside_state(sandbox, ws)
    outside_png = (sandbox / "outside" / "pic.png").read_bytes()
    findings: list[str] = []
    counts = {"cases": 0, "outside_by_oracle": 0, "refused_outside": 0, "inside_ok": 0,
              "writes_inside": 0}
    per_tool: dict[str, int] = {}

    def reset() -> None:
        shutil.rmtree(ws)
        ws.mkdir()
        (ws / "sub").mkdir()
        populate(ws, sandbox)

    @fixed(total)
    @given(st.sampled_from(tools), paths(sandbox, ws), paths(sandbox, ws), st.booleans())
    def one(tool: str, p: str, other: str, swap: bool) -> None:
        counts["cases"] += 1
        per_tool[tool] = per_tool.get(tool, 0) + 1
        if tool == "move_file" and swap:
            p, other = other, p
        judged = [p, other] if tool == "move_file" else [p]
        if tool == "apply_patch":
            judged = [p.strip(PATCH_TRIM)] + ([] if swap else [other])
        outside = any(oracle_outside(ws, x) for x in judged)
        calls = []
        if tool in MUTATORS:
            calls.append(("read_file", {"path": p}))
        calls.append((tool, arguments(tool, p, other, swap)))
        results = [s.call(name, args) for name, args in calls]
        label = f"{tool} {judged!r}"
        for r in results:
            why = leaked(r, outside_png)
            if why:
                findings.append(f"{label}: {why}: {r.text[:300]!r}")
        final = results[-1]
        if outside:
            counts["outside_by_oracle"] += 1
            if not final.is_error:
                findings.append(f"{label}: succeeded on a path outside the workspace: "
                                f"{final.text[:300]!r}")
            else:
                counts["refused_outside"] += 1
        elif not final.is_error:
            counts["inside_ok"] += 1
            if tool in MUTATORS:
                counts["writes_inside"] += 1
        now = outside_state(sandbox, ws)
        if now != baseline:
            changed = sorted(k for k in set(now) | set(baseline) if now.get(k) != baseline.get(k))
            findings.append(f"{label}: changed outside the workspace: {changed}")
            for rel in changed:  # restore the bait so later cases stay meaningful
                full = sandbox / rel
                if rel not in baseline and (full.is_file() or full.is_symlink()):
                    full.unlink()
        if tool in MUTATORS and not final.is_error:
            reset()

    one()
    figure("confinement", cases=counts["cases"], tools=len(tools), per_tool=per_tool,
           outside_by_oracle=counts["outside_by_oracle"],
           refused_outside=counts["refused_outside"], inside_successes=counts["inside_ok"],
           writes_inside=counts["writes_inside"], failures=len(findings))
    assert not findings, "\n".join(findings[:20])
