"""Workspace confinement (files.md §2), directly on `Workspace`."""

from __future__ import annotations

import os

import pytest
from callgate import ToolError
from callgate.paths import Workspace, within


def test_component_boundary_not_string_prefix(tmp_path):
    assert within("/w/proj/x", "/w/proj") and within("/w/proj", "/w/proj")
    assert not within("/w/proj-2/x", "/w/proj") and not within("/w/pro", "/w/proj")
    assert within("/anything", "/")


def test_resolution_is_lexical_then_canonical(tmp_path):
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    ws = Workspace(root)
    rp = ws.resolve("sub/./a/../b.txt", write=True)
    assert rp.path == str(root / "sub" / "b.txt") and rp.display == "sub/b.txt"
    assert ws.resolve("~/x").display == "~/x"  # no ~ expansion
    with pytest.raises(ToolError) as exc:
        ws.resolve("sub/../../x.txt", write=True)
    assert exc.value.kind == "outside_workspace"
    assert exc.value.message.startswith(f"FS_OUTSIDE_WORKSPACE: {tmp_path}/x.txt resolves "
                                        f"outside the workspace ({root}); use a path inside it")


def test_symlinks_are_resolved_including_the_last_component(tmp_path):
    root, out = tmp_path / "proj", tmp_path / "out"
    root.mkdir()
    out.mkdir()
    (root / "real.txt").write_text("x")
    os.symlink(root / "real.txt", root / "l.txt")
    os.symlink(out, root / "door")
    os.symlink(out / "nothing", root / "dangling")
    ws = Workspace(root)
    rp = ws.resolve("l.txt")
    assert rp.path == str(root / "real.txt") and rp.display == "l.txt"
    assert ws.entry_path(rp) == str(root / "l.txt")
    for bad in ("door/new.txt", "door", "dangling"):
        with pytest.raises(ToolError):
            ws.resolve(bad, write=True)


def test_read_roots_extend_write_roots(tmp_path):
    root, extra, ro = tmp_path / "p", tmp_path / "e", tmp_path / "r"
    for d in (root, extra, ro):
        d.mkdir()
    ws = Workspace(root, [str(extra)], [str(ro)])
    assert ws.is_within(extra / "x", write=True) and ws.is_within(ro / "x")
    assert not ws.is_within(ro / "x", write=True)
    with pytest.raises(ToolError) as exc:
        ws.resolve(tmp_path / "z", write=True)
    assert f"({root}, {extra})" in exc.value.message


def test_nul_bytes_are_refused(tmp_path):
    with pytest.raises(ToolError):
        Workspace(tmp_path).resolve("a\x00b")


def test_display_is_relpath_s_without_calling_it(tmp_path, monkeypatch):
    """A resolved path's display is ``os.path.relpath``'s from the root, cut from the
    normalized path (issue 38: relpath's abspath/split passes ran on every read)."""
    (tmp_path / "ws" / "a" / "b").mkdir(parents=True)
    ws = Workspace(tmp_path / "ws")
    cases = [".", "a", "a/b", "a/b/c.txt", "a/../a/./b//x", str(tmp_path / "ws"),
             str(tmp_path / "ws" / "a" / "y.py"), "x/..", "no/such/file"]
    expected = {c: os.path.relpath(ws.lexical(c), ws.root).replace(os.sep, "/") for c in cases}
    outside = str(tmp_path / "elsewhere" / "z")
    calls = []
    monkeypatch.setattr(os.path, "relpath", lambda *a: calls.append(a) or "?")
    for case in cases:
        assert ws.resolve(case).display == expected[case]
        assert ws.display(case) == expected[case]
    assert ws.display(outside) == outside
    assert calls == []
