"""Servers found where users install them (issue 35, 5): callgate's own environment first
(the venv ``callgate`` runs from: a GUI client starts ``callgate serve`` by its absolute path,
with a ``PATH`` that does not name that venv), then ``PATH``, then the user's ``[lsp]
server_paths``; never a directory inside the workspace, whichever of the three names it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from callgate_lsp import LSP, _table

from .conftest import SCRIPTED

CALLGATE = Path(sys.prefix) / "bin" / "callgate"
BARE_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))


def replay(ws: Path, calls: list[dict], config: Path | None = None,
           env: dict[str, str] | None = None) -> list[dict]:
    """``callgate replay`` started by the absolute path of callgate's own script, with a
    ``PATH`` that does not name callgate's environment."""
    lines = "".join(json.dumps({"id": f"c{i}", **c}) + "\n" for i, c in enumerate(calls))
    argv = [str(CALLGATE), "replay", "-", "--workspace", str(ws), "--surface", "full"]
    if config is not None:
        argv += ["--config", str(config)]
    proc = subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": BARE_PATH,
                               "CALLGATE_LOAD_PLUGINS": "lsp", **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]


def hover(file: str, symbol: str) -> dict:
    return {"name": "lsp_hover", "arguments": {"file": file, "line": 1, "symbol": symbol}}


@pytest.fixture
def installed() -> None:
    if not CALLGATE.exists() or not (Path(sys.prefix) / "bin" / "basedpyright-langserver").exists():
        pytest.skip("callgate and basedpyright are not installed in this interpreter's "
                    "environment (uv sync installs both)")
    if shutil.which("basedpyright-langserver", path=BARE_PATH):
        pytest.skip("basedpyright is on the bare PATH too: the test would prove nothing")


def test_the_python_server_in_callgates_own_environment_is_found(installed, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def double(n: int) -> int:\n    return n * 2\n")
    [r] = replay(ws, [hover("a.py", "double")])
    assert r["is_error"] is False, r
    assert "def double(n: int) -> int" in r["content"]


def test_user_server_paths_are_searched_last(tmp_path):
    bindir = tmp_path / "my-servers"
    bindir.mkdir()
    record = tmp_path / "record"
    record.mkdir()
    wrapper = bindir / "scripted-ls"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPTED} \"$@\"\n")
    wrapper.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.scr").write_text("alpha beta\n")
    config = tmp_path / "user.toml"
    table = (f'[lsp.servers.scripted]\ncommand = "scripted-ls"\nextensions = [".scr"]\n'
             f"env = {{ SCRIPTED_DIR = {json.dumps(str(record))} }}\n")
    config.write_text(table)
    [r] = replay(ws, [hover("a.scr", "beta")], config)
    assert r["error"]["signature"] == "LSP_SERVER_NOT_FOUND"  # not on PATH, not configured
    config.write_text(f"[lsp]\nserver_paths = [{json.dumps(str(bindir))}]\n\n{table}")
    [r] = replay(ws, [hover("a.scr", "beta")], config)
    assert r["is_error"] is False and r["content"] == "line 0 character 6", r


def test_attack_no_server_is_taken_from_the_workspace_whichever_list_names_it(
        lsp_session, tmp_path, monkeypatch, no_leaks):
    """A workspace the model writes holds ``.venv/bin/basedpyright-langserver`` (a marker
    writer), and callgate itself runs from that venv (a project that develops callgate), PATH
    and ``[lsp] server_paths`` name it too: the planted program never runs."""
    marker = tmp_path / "ran"
    s = lsp_session({}, files={"a.py": "x = 1\n"})
    planted_dir = s.path(".venv/bin")
    planted_dir.mkdir(parents=True)
    for name in ("basedpyright-langserver", "pyright-langserver", "pylsp",
                 "jedi-language-server"):
        program = planted_dir / name
        program.write_text(f"#!/bin/sh\necho ran > {marker}\n")
        program.chmod(0o755)
    monkeypatch.setattr(_table, "own_bin_dirs", lambda: [str(planted_dir)])
    monkeypatch.setenv("PATH", os.pathsep.join([str(planted_dir), BARE_PATH]))
    s.session.extension(LSP).config["server_paths"] = [str(planted_dir)]
    r = s.call("lsp_hover", file="a.py", line=1, symbol="x")
    assert r.is_error and r.error.signature == "LSP_SERVER_NOT_FOUND", r.text
    assert not marker.exists()


def test_the_search_order(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/p1:relative:/p2")
    monkeypatch.setattr(_table, "own_bin_dirs", lambda: ["/own"])
    assert _table.search_path(["/u1", "~/u2"]).split(os.pathsep) == [
        "/own", "/p1", "relative", "/p2", "/u1", os.path.expanduser("~/u2")]
