"""The files tools end to end through ``callgate replay`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

OUTSIDE_PLUGIN = textwrap.dedent('''
    """A test plugin whose tool writes files behind the session's back, like a shell would."""
    from callgate import ToolSpec, hookimpl

    def scribble(ctx, args):
        with open(ctx.workspace.resolve(args["path"]).path, "ab") as fh:
            fh.write(args["text"].encode())
        return "scribbled"

    @hookimpl
    def callgate_register_tools(registry):
        registry.add(ToolSpec(name="scribble", description="append text outside the ledger",
                              schema={"type": "object", "properties": {
                                  "path": {"type": "string"}, "text": {"type": "string"}}},
                              execute=scribble, visibility="surface"))
''')

NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": 3, "metadata": {},
                       "outputs": [], "source": ["1 + 1"]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 4}


def _outside_dist(root):
    """A dist-info on sys.path that exposes the test plugin as a ``callgate`` entry point."""
    (root / "cg_outside.py").write_text(OUTSIDE_PLUGIN)
    info = root / "cg_outside-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cg-outside\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[callgate]\noutside = cg_outside\n")


def test_replay_reads_edits_moves_and_refuses_a_stale_edit(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    (ws / "n.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (ws / "s.txt").write_text("keep\n")
    site = tmp_path / "site"
    site.mkdir()
    _outside_dist(site)
    calls = [
        {"id": "r1", "name": "read_file", "arguments": {"path": "a.py", "limit": 2}},
        {"id": "e1", "name": "edit_file", "arguments": json.dumps(
            {"path": "a.py", "old_string": "return 1", "new_string": "return 10"})},
        {"id": "m1", "name": "multi_edit", "arguments": {"path": "a.py", "edits": [
            {"old_string": "def f", "new_string": "def f1"},
            {"old_string": "return 2", "new_string": "return 20"}]}},
        {"id": "d1", "name": "delete_range", "arguments": {
            "path": "a.py", "start_anchor": "def g():", "end_anchor": "    return 20"}},
        {"id": "v1", "name": "move_file", "arguments": {"source_path": "a.py",
                                                         "destination_path": "pkg/a.py"}},
        {"batch": [{"id": "r2", "name": "read_file", "arguments": {"path": "n.ipynb"}},
                   {"id": "r3", "name": "read_file", "arguments": {"path": "s.txt"}}]},
        {"id": "n1", "name": "notebook_edit", "arguments": {"path": "n.ipynb", "cell_number": 0,
                                                            "new_source": "2 + 2"}},
        {"id": "x1", "name": "scribble", "arguments": {"path": "s.txt", "text": "outside\n"}},
        {"id": "e2", "name": "edit_file", "arguments": {"path": "s.txt", "old_string": "keep",
                                                        "new_string": "kept"}},
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(c) for c in calls) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get(
        "PYTHONPATH", "")]), "CALLGATE_LOAD_PLUGINS": "files,outside"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(ws), "--surface", "full"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    for key in ("r1", "e1", "m1", "d1", "v1", "r2", "r3", "n1", "x1"):
        assert not out[key]["is_error"], out[key]
    assert out["r1"]["content"].startswith("1→def f():\n2→    return 1\n\n[lines 1-2 shown")
    assert out["v1"]["content"] == "moved a.py to pkg/a.py"
    assert (ws / "pkg" / "a.py").read_text() == "def f1():\n    return 10\n\n\n"
    assert json.loads((ws / "n.ipynb").read_text())["cells"][0]["source"] == ["2 + 2"]
    stale = out["e2"]
    assert stale["is_error"] and stale["error"]["kind"] == "stale_version"
    assert stale["error"]["signature"] == "FS_STALE_VERSION"
    assert (ws / "s.txt").read_text() == "keep\noutside\n"
    assert sorted(os.listdir(ws)) == ["n.ipynb", "pkg", "s.txt"]
