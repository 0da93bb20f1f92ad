"""Diagnostics across files (issue 35, 1): a file changed on disk, by the session's own tools or
by a shell command, reaches every running server (``workspace/didChangeWatchedFiles``, as its
watchers ask), so the diagnostics of a file that imports it are the current ones, and an
answer given before the server re-reported says which changed files may still be settling.

Real servers: basedpyright (it registers ``**`` watchers and answers pulled diagnostics) and
the scripted pygls server (it records what it is told, and can be told to stay silent)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from callgate import ToolCall
from callgate_files import FILE_WATCH
from callgate_lsp import LSP

from .conftest import fresh_diagnostics, python_config, scripted_config

HELPER = "def helper(n: int) -> int:\n    return n * 2\n"
USER = "from helper import helper\n\nvalue: int = helper(2)\n"
STANDARD = {"python": {"settings": {"basedpyright": {"analysis": {
    "typeCheckingMode": "standard"}}}}}


def diagnostics_until(s, file: str, predicate, timeout: float = 60.0, **args: Any):
    """``lsp_diagnostics`` of ``file`` until ``predicate(result)`` holds (or the timeout: the
    last result is returned either way, for the assertion to show)."""
    deadline = time.monotonic() + timeout
    while True:
        r = s.call("lsp_diagnostics", file=file, **args)
        if r.is_error or predicate(r) or time.monotonic() > deadline:
            return r
        time.sleep(0.2)


def watching(s) -> bool:
    """Whether the session's workspace watcher (callgate-files) runs: what a shell command
    changes reaches the session through it."""
    return s.session.extension(FILE_WATCH).watching.wait(10)


def basedpyright(lsp_session, **lsp: Any):
    return lsp_session(python_config("basedpyright", servers=STANDARD, **lsp),
                       files={"helper.py": HELPER, "use.py": USER})


def test_a_write_file_to_an_imported_module_shows_in_the_importer(lsp_session, no_leaks):
    s = basedpyright(lsp_session)
    assert fresh_diagnostics(s, "use.py").text == "no diagnostics for use.py"
    s.expect_ok("read_file", {"path": "helper.py"})
    s.expect_ok("write_file", {"path": "helper.py",
                               "content": "def helper(n: int) -> str:\n    return str(n)\n"})
    # the server was told before write_file's result was shaped: the next query that gets
    # the server's answer in time has it (on a loaded machine the pull may outlast one wait)
    r = diagnostics_until(s, "use.py", lambda r: r.meta.get("fresh"), timeout=30)
    assert r.text.startswith("1 diagnostic(s) in use.py:\n3:14 error [basedpyright] Type "
                             '"str" is not assignable to declared type "int"'), r.text


def test_a_shell_command_that_breaks_an_imported_module_shows_in_the_importer(
        lsp_session, no_leaks):
    s = basedpyright(lsp_session)
    assert fresh_diagnostics(s, "use.py").text == "no diagnostics for use.py"
    assert watching(s), "the session's watcher did not start"
    s.expect_ok("bash", {"command": "sed -i 's/def helper/def renamed/' helper.py"})
    # the watcher reports within a fraction of a second: no query of helper.py in between
    r = diagnostics_until(s, "use.py", lambda r: "diagnostic(s)" in r.text, timeout=20)
    assert r.text.startswith('1 diagnostic(s) in use.py:\n1:20 error [basedpyright] '
                             '"helper" is unknown import symbol'), r.text
    # and back: the importer is clean again
    s.expect_ok("bash", {"command": "sed -i 's/def renamed/def helper/' helper.py"})
    r = diagnostics_until(s, "use.py", lambda r: r.text == "no diagnostics for use.py",
                          timeout=20)
    assert r.text == "no diagnostics for use.py"


def test_a_new_module_created_by_a_shell_command_resolves_the_import(lsp_session, no_leaks):
    s = lsp_session(python_config("basedpyright", servers=STANDARD),
                    files={"use.py": USER})
    r = fresh_diagnostics(s, "use.py")
    assert 'Import "helper" could not be resolved' in r.text, r.text
    assert watching(s)
    s.expect_ok("bash", {"command": f"printf {json.dumps(HELPER)} > helper.py"})
    r = diagnostics_until(s, "use.py", lambda r: r.text == "no diagnostics for use.py",
                          timeout=20)
    assert r.text == "no diagnostics for use.py"


# --- what the server is told, exactly (the scripted server records it) ------------------------


def told(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "scripted" / "watched.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def wait_told(tmp_path: Path, n: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while len(told(tmp_path)) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return told(tmp_path)


def test_watched_files_follow_the_servers_own_registration(lsp_session, tmp_path, no_leaks):
    # the scripted server registers "**/*.scr" (create, change) and "**/settings.cfg" (all)
    s = lsp_session(scripted_config(tmp_path, "register_watchers"),
                    files={"a.scr": "alpha\n", "b.scr": "beta\n", "settings.cfg": "x=1\n",
                           "notes.txt": "hello\n"})
    s.expect_ok("lsp_hover", {"file": "a.scr", "line": 1, "symbol": "alpha"})
    deadline = time.monotonic() + 20
    while not (tmp_path / "scripted" / "registered").exists():
        assert time.monotonic() < deadline, "the server never registered its watchers"
        time.sleep(0.05)
    s.expect_ok("read_file", {"path": "b.scr"})
    s.expect_ok("edit_file", {"path": "b.scr", "old_string": "beta", "new_string": "gamma"})
    [first] = wait_told(tmp_path, 1)
    assert first == [{"path": "b.scr", "type": 2}]  # told once, though the watcher saw it too
    assert watching(s)
    s.expect_ok("bash", {"command": "echo y=2 >> settings.cfg; echo more >> notes.txt; "
                                    "rm b.scr; echo new > c.scr"})
    events = wait_told(tmp_path, 2)
    seen = {(e["path"], e["type"]) for batch in events[1:] for e in batch}
    deadline = time.monotonic() + 10
    while {("settings.cfg", 2), ("c.scr", 1)} - seen and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = {(e["path"], e["type"]) for batch in told(tmp_path)[1:] for e in batch}
    # notes.txt: no watcher asks for it; deleting b.scr: its watcher asks for create and
    # change only
    assert seen == {("settings.cfg", 2), ("c.scr", 1)}, seen


def test_a_server_without_watchers_is_told_about_its_own_files(lsp_session, tmp_path, no_leaks):
    s = lsp_session(scripted_config(tmp_path), files={"a.scr": "alpha\n", "n.txt": "x\n"})
    s.expect_ok("lsp_hover", {"file": "a.scr", "line": 1, "symbol": "alpha"})
    assert watching(s)
    s.expect_ok("bash", {"command": "echo y >> n.txt; echo new > b.scr"})
    events = wait_told(tmp_path, 1)
    assert events and {(e["path"], e["type"]) for e in events[0]} <= {("b.scr", 1), ("b.scr", 2)}
    assert all(e["path"] != "n.txt" for batch in events for e in batch)


def test_an_answer_before_the_server_reported_names_what_may_be_settling(
        lsp_session, tmp_path, no_leaks):
    # the server stops reporting after the first report of each file ("once")
    s = lsp_session(scripted_config(tmp_path, "once", diagnostics_wait_ms=300),
                    files={"a.scr": "TODO here\n", "lib.scr": "fine\n"})
    r = fresh_diagnostics(s, "a.scr")
    assert r.text == "1 diagnostic(s) in a.scr:\n1:1 warning [scripted] a TODO is left"
    s.expect_ok("read_file", {"path": "lib.scr"})
    s.expect_ok("write_file", {"path": "lib.scr", "content": "changed\n"})
    r = s.call("lsp_diagnostics", file="a.scr")
    assert r.text == ("1 diagnostic(s) in a.scr:\n1:1 warning [scripted] a TODO is left\n\n"
                      "(may still be settling: lib.scr changed, and python3 (scripted) has not "
                      "reported on a.scr since; call again shortly)").replace(
        "python3", Path(s.session.extension(LSP).servers()[0]["command"]).name), r.text
    assert r.meta["settling"] == ["lib.scr"] and r.meta["fresh"] is False


def test_edits_in_one_batch_still_show_each_its_own_new_diagnostics(lsp_session, tmp_path,
                                                                    no_leaks):
    """The change feed re-syncs an open file only after the before-edit check of that file."""
    s = lsp_session(scripted_config(tmp_path, diagnostics_after_edit=True),
                    files={"a.scr": "one\ntwo\n"})
    s.expect_ok("read_file", {"path": "a.scr"})
    fresh_diagnostics(s, "a.scr")
    first, second = s.run(
        ToolCall("b1", "edit_file", {"path": "a.scr", "old_string": "one",
                                     "new_string": "one TODO"}),
        ToolCall("b2", "edit_file", {"path": "a.scr", "old_string": "two",
                                     "new_string": "two TODO"}))
    assert first.text.endswith("New diagnostics:\na.scr:1:5 warning [scripted] a TODO is left")
    assert second.text.endswith("New diagnostics:\na.scr:2:5 warning [scripted] a TODO is left")


@pytest.mark.parametrize("via", ["write_file", "bash"])
def test_the_importer_is_fresh_through_the_sandbox_too(lsp_session, no_leaks, via, tmp_path):
    """Confined (bubblewrap, the workspace read-only to the server), the server still sees the
    changed file: the notification names it, and it reads the workspace."""
    import callgate_sandbox

    probe = callgate_sandbox.BwrapBackend().probe()
    if not probe.ok:
        pytest.skip(f"bubblewrap cannot run here: {probe.detail}")
    cfg = python_config("basedpyright", servers=STANDARD)
    cfg["sandbox"] = {"enabled": True}
    s = lsp_session(cfg, files={"helper.py": HELPER, "use.py": USER},
                    plugins=(callgate_sandbox,))
    assert fresh_diagnostics(s, "use.py").text == "no diagnostics for use.py"
    assert s.session.extension(LSP).servers()[0]["confined"] is True
    if via == "write_file":
        s.expect_ok("read_file", {"path": "helper.py"})
        s.expect_ok("write_file", {"path": "helper.py", "content": "X = 1\n"})
    else:
        assert watching(s)
        s.expect_ok("bash", {"command": "echo 'X = 1' > helper.py"})
    r = diagnostics_until(s, "use.py", lambda r: "diagnostic(s)" in r.text, timeout=20)
    assert '"helper" is unknown import symbol' in r.text, r.text
