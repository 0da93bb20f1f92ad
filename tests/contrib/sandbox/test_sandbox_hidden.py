"""What the sandbox hides from commands altogether (``callgate.process.hidden_paths``): the
state directory with the session store, the user config directory, and a session store
configured elsewhere; a workspace inside a hidden directory still shows through."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from callgate_sandbox import Policy
from callgate_sandbox._bwrap import hidden_args

from .sandbox_helpers import needs_bwrap


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A state and a config directory outside ``/tmp`` (the sandbox's own ``/tmp`` would
    hide them by accident), with a store-like file and a config in them."""
    parent = next((p for p in ("/var/tmp", os.path.expanduser("~"))
                   if os.path.isdir(p) and os.access(p, os.W_OK)), None)
    if parent is None:
        pytest.skip("no writable directory outside /tmp")
    root = Path(tempfile.mkdtemp(prefix="callgate-hidden-", dir=parent)).resolve()
    (root / "state" / "memory").mkdir(parents=True)
    (root / "state" / "memory" / "notes.md").write_text("recorded secrets")
    (root / "config").mkdir()
    (root / "config" / "config.toml").write_text("# the user's trust decisions\n")
    monkeypatch.setenv("CALLGATE_HOME", str(root / "state"))
    monkeypatch.setenv("CALLGATE_CONFIG_HOME", str(root / "config"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@needs_bwrap
def test_the_state_and_config_directories_read_empty_and_read_only(sandboxed, outside):
    s = sandboxed()
    r = s.call("bash", {"command": f"find {outside}/state {outside}/config -mindepth 1 | wc -l; "
                                   f"cat {outside}/state/memory/notes.md; "
                                   f"touch {outside}/state/x && echo wrote"})
    assert r.text.startswith("0\n"), r.text  # nothing inside either
    # the note says why, without a key to open them
    assert "callgate's own state or config, which the sandbox hides" in r.text, r.text
    assert "[sandbox] writable" not in r.text, r.text
    assert "recorded secrets" not in r.text and "No such file" in r.text, r.text
    assert "wrote" not in r.text and "Read-only file system" in r.text, r.text
    # the host's copy is untouched
    assert (outside / "state" / "memory" / "notes.md").read_text() == "recorded secrets"
    assert (outside / "state" / "sessions").is_dir()  # the store is there, on the host


@needs_bwrap
def test_a_store_elsewhere_is_hidden_file_by_file(sandboxed, outside):
    store = outside / "elsewhere" / "my-store.sqlite3"
    store.parent.mkdir()
    store.write_text("recorded secrets")
    (outside / "elsewhere" / "neighbour.txt").write_text("visible")
    s = sandboxed(config={"sessions": {"store": str(store), "record": "off"}})
    r = s.call("bash", {"command": f"cat {store}; echo; cat {store.parent}/neighbour.txt"})
    assert "recorded secrets" not in r.text and "visible" in r.text, r.text


@needs_bwrap
def test_a_workspace_inside_the_state_directory_shows_through(sandboxed, outside):
    ws = outside / "state" / "workspaces" / "w1"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("in the workspace\n")
    s = sandboxed(workspace=ws)
    r = s.call("bash", {"command": f"cat a.txt && echo more > b.txt && cat b.txt; "
                                   f"ls -A {outside}/state; ls {outside}/state/memory"})
    assert "in the workspace" in r.text and "more" in r.text, r.text
    # the rest of the state directory stays hidden: only the way to the workspace shows
    listed = r.text.splitlines()
    assert "notes.md" not in listed and "sessions" not in listed, r.text
    assert "workspaces" in listed, r.text
    assert (ws / "b.txt").read_text() == "more\n"


def test_hidden_directories_holding_a_bind_go_first_and_the_rest_last(tmp_path: Path):
    state, config = tmp_path / "state", tmp_path / "config"
    for d in (state / "ws", config):
        d.mkdir(parents=True)
    lone = tmp_path / "store.sqlite3"
    lone.write_text("")
    policy = Policy(workspace=(str(state / "ws"),), private_dirs=("/nonexistent",),
                    hidden=(str(state), str(config), str(lone), str(tmp_path / "gone")))
    first, last = hidden_args(policy)
    assert first == ["--tmpfs", str(state)]
    assert last == ["--tmpfs", str(config), "--ro-bind", "/dev/null", str(lone),
                    "--remount-ro", str(config), "--remount-ro", str(state)]
    # what lies in the sandbox's own private directories is hidden already
    assert hidden_args(Policy(workspace=(), private_dirs=(str(tmp_path),),
                              hidden=(str(state),))) == ([], [])


@needs_bwrap
def test_a_directory_the_user_lists_as_readable_shows_through(sandboxed, outside):
    skills = outside / "state" / "skills" / "tidy" / "scripts"
    skills.mkdir(parents=True)
    (skills / "run.sh").write_text("echo tidied\n")
    s = sandboxed(sandbox={"readable": [str(outside / "state" / "skills")]})
    r = s.call("bash", {"command": f"sh {skills}/run.sh; ls -A {outside}/state"})
    listed = r.text.splitlines()
    assert "tidied" in listed and "skills" in listed, r.text
    assert "memory" not in listed and "sessions" not in listed, r.text
