"""The observation gate still works when the shell is sandboxed: a file a sandboxed command
changed after it was read is stale for the file tools (the workspace is the host's own
directory, bound in, not a copy)."""

from __future__ import annotations

import callgate_files

from .sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap


def test_the_gate_notices_a_file_changed_by_a_sandboxed_command(sandboxed):
    s = sandboxed(plugins=(callgate_files,), files={"a.txt": "one\ntwo\n"},
                  config={"files": {"watch": False}})
    assert s.call("read_file", {"path": "a.txt"}).text == "1→one\n2→two"
    r = s.call("bash", {"command": "printf 'appended line\\n' >> a.txt"})
    assert r.text == "(no output)\n[exit code 0]"
    r = s.call("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "1"})
    assert r.is_error and r.error.kind == "stale_version"
    assert r.text.startswith("FS_STALE_VERSION: a.txt changed after this session last read it")
    assert "+appended line" in r.text
    assert s.read("a.txt") == b"one\ntwo\nappended line\n"
    s.call("read_file", {"path": "a.txt"})
    r = s.call("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "1"})
    assert not r.is_error
    assert s.call("bash", {"command": "cat a.txt"}).text == "1\ntwo\nappended line\n[exit code 0]"


def test_a_file_created_by_a_sandboxed_command_must_be_read_before_it_is_edited(sandboxed):
    s = sandboxed(plugins=(callgate_files,), config={"files": {"watch": False}})
    assert not s.call("bash", {"command": "echo made > new.txt"}).is_error
    r = s.call("edit_file", {"path": "new.txt", "old_string": "made", "new_string": "x"})
    assert r.is_error and s.read("new.txt") == b"made\n"
