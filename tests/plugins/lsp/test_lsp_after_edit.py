"""``[lsp] diagnostics_after_edit``: a successful mutation's result lists exactly the
diagnostics it introduced, for every tool that declares ``mutates_paths``, called directly or
through ``use_capability``; bounded in lines and in wait time.

The scripted server (one warning per ``TODO``, published on every open and change) makes the
rules exact; basedpyright shows the same on real type errors."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
from callgate import PathRole, ToolCall, ToolSpec, hookimpl
from callgate_lsp import LSP

from .conftest import fresh_diagnostics, python_config, scripted_config

ON = {"diagnostics_after_edit": True}


def on(tmp_path, *modes: str, **lsp: Any) -> dict[str, Any]:
    return scripted_config(tmp_path, *modes, **{**ON, **lsp})


def edit(s, path: str, old: str, new: str, call_id: str | None = None, **extra: Any):
    args = {"path": path, "old_string": old, "new_string": new, **extra}
    [r] = s.run(ToolCall(call_id or f"e{time.monotonic_ns()}", "edit_file", args))
    return r


def ready(s, *paths: str) -> None:
    """Read each file (as the model does before an edit) and wait until its server has
    reported on it, so the bounded after-edit wait is spent on the edit alone."""
    for path in paths:
        s.expect_ok("read_file", {"path": path})
        assert fresh_diagnostics(s, path).meta.get("fresh"), f"no report on {path}"


def section(text: str) -> str:
    """The ``New diagnostics:`` part of a result."""
    assert "New diagnostics:" in text, text
    return text[text.index("New diagnostics:"):]


def test_off_by_default(lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path), files={"a.scr": "one\n"})
    s.expect_ok("read_file", {"path": "a.scr"})
    r = edit(s, "a.scr", "one", "one TODO")
    assert not r.is_error and "New diagnostics" not in r.text
    assert s.session.extension(LSP).servers() == []  # nothing was started for it


def test_only_the_new_diagnostic_is_listed(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "TODO old\nkeep\n"})
    ready(s, "a.scr")
    # the old TODO moves down a line: the same diagnostic on the same text is not new
    r = edit(s, "a.scr", "keep", "keep TODO new", )
    assert section(r.text) == "New diagnostics:\na.scr:2:6 warning [scripted] a TODO is left"
    assert r.meta["new_diagnostics"] == 1
    r = edit(s, "a.scr", "TODO old\n", "top\nTODO old\n")
    assert section(r.text) == "New diagnostics: none"
    assert r.meta["new_diagnostics"] == 0


def test_a_new_file_lists_all_its_diagnostics(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"other.scr": "x\n"})
    ready(s, "other.scr")  # the server is up
    r = s.call("write_file", path="n.scr", content="TODO a\nfine\nTODO b\n")
    assert section(r.text) == ("New diagnostics:\nn.scr:1:1 warning [scripted] a TODO is left\n"
                               "n.scr:3:1 warning [scripted] a TODO is left")


def test_a_failed_edit_gets_no_section_and_changes_nothing(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "one\n"})
    ready(s, "a.scr")
    before = s.snapshot()
    r = edit(s, "a.scr", "absent", "TODO")
    assert r.is_error and "New diagnostics" not in r.text
    s.assert_unchanged(before)
    assert s.session.extension(LSP).snapshots == {}


def test_through_use_capability(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "one\ntwo\n"}, surface="lean")
    ready(s, "a.scr")
    [r] = s.run(ToolCall("m1", "use_capability", {
        "action": "call", "capability_id": "tool:multi_edit",
        "arguments": {"path": "a.scr", "edits": [{"old_string": "two",
                                                  "new_string": "two TODO"}]}}))
    assert not r.is_error, r.text
    assert section(r.text) == "New diagnostics:\na.scr:2:5 warning [scripted] a TODO is left"


def test_raw_json_arguments_are_read_too(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "one\n"})
    ready(s, "a.scr")
    args = json.dumps({"path": "a.scr", "old_string": "one", "new_string": "TODO one"})
    [r] = s.run(ToolCall("raw1", "edit_file", args))
    assert section(r.text) == "New diagnostics:\na.scr:1:1 warning [scripted] a TODO is left"


class AppendPlugin:
    """A third-party mutating tool: it only declares its path argument."""

    name = "append_test"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="append_line", description="Append one line to a file.",
            schema={"type": "object", "properties": {"target": {"type": "string"},
                                                     "text": {"type": "string"}},
                    "required": ["target", "text"], "additionalProperties": False},
            execute=self.execute, mutates_paths=(PathRole("target"),), visibility="surface"))

    def execute(self, ctx: Any, args: dict[str, Any]) -> str:
        gated = ctx.gated["target"]
        with open(gated.path, "a", encoding="utf-8") as fh:
            fh.write(args["text"] + "\n")
        return f"appended to {gated.display}"


def test_a_third_party_tool_that_declares_its_paths_gets_it(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "TODO first\n"}, plugins=(AppendPlugin(),))
    ready(s, "a.scr")
    r = s.call("append_line", target="a.scr", text="TODO second")
    assert r.text.startswith("appended to a.scr\n\nNew diagnostics:\na.scr:2:1 warning "
                             "[scripted] a TODO is left")


def test_two_edits_in_one_batch_each_show_their_own(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "one\ntwo\n"})
    ready(s, "a.scr")
    first, second = s.run(
        ToolCall("b1", "edit_file", {"path": "a.scr", "old_string": "one",
                                     "new_string": "one TODO"}),
        ToolCall("b2", "edit_file", {"path": "a.scr", "old_string": "two",
                                     "new_string": "two TODO"}))
    assert section(first.text) == "New diagnostics:\na.scr:1:5 warning [scripted] a TODO is left"
    assert section(second.text) == "New diagnostics:\na.scr:2:5 warning [scripted] a TODO is left"


def test_the_section_is_bounded_in_lines(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path, after_edit_max_lines=3), files={"a.scr": "x\n"})
    ready(s, "a.scr")
    r = edit(s, "a.scr", "x\n", "x\n" + "TODO\n" * 5)
    assert section(r.text).splitlines() == [
        "New diagnostics:", *[f"a.scr:{n}:1 warning [scripted] a TODO is left"
                              for n in (2, 3, 4)],
        "… and 2 more (lsp_diagnostics lists them all)"]


def test_the_wait_is_bounded(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path, "silent", after_edit_wait_ms=500), files={"a.scr": "x\n"})
    s.expect_ok("read_file", {"path": "a.scr"})
    s.expect_ok("lsp_hover", {"file": "a.scr", "line": 1, "symbol": "x"})  # the server is warm
    t0 = time.monotonic()
    r = edit(s, "a.scr", "x", "x TODO")
    took = time.monotonic() - t0
    assert not r.is_error
    assert section(r.text).startswith("New diagnostics: not known yet (python")
    assert "did not report within 0.5 s; lsp_diagnostics shows them)" in r.text
    assert took < 2.5, took


def test_files_no_server_covers_and_missing_servers_get_nothing(lsp_session, tmp_path):
    cfg = {"lsp": {**ON, "servers": {"python": {"command": "no-such-ls-xyz",
                                                "install_hint": "pip install xyz"}}}}
    s = lsp_session(cfg, files={"a.txt": "one\n", "a.py": "x = 1\n"})
    s.expect_ok("read_file", {"path": "a.txt"})
    s.expect_ok("read_file", {"path": "a.py"})
    r = edit(s, "a.txt", "one", "TODO")
    assert not r.is_error and "New diagnostics" not in r.text
    r = edit(s, "a.py", "x = 1", "x = 2")
    assert not r.is_error and "New diagnostics" not in r.text
    assert "diagnostics after edits are off for this file type: language server " \
           '"no-such-ls-xyz" not found (looked in callgate\'s environment, on PATH and in ' \
           "[lsp] server_paths); install it: pip install xyz" in r.text
    r = edit(s, "a.py", "x = 2", "x = 3")
    assert "not found (looked in" not in r.text  # said once


def wait_for_server(s, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not s.session.extension(LSP).servers():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_read_starts_the_server_in_the_background(lsp_session, tmp_path):
    s = lsp_session(on(tmp_path), files={"a.scr": "TODO\n", "b.txt": "x\n"})
    s.expect_ok("read_file", {"path": "b.txt"})
    assert s.session.extension(LSP).servers() == []
    s.expect_ok("read_file", {"path": "a.scr"})
    wait_for_server(s)
    t0 = time.monotonic()
    r = edit(s, "a.scr", "TODO\n", "TODO\nfine\n")
    assert section(r.text) == "New diagnostics: none"
    assert time.monotonic() - t0 < 2


# --- a real type checker -----------------------------------------------------------------------

TYPED = '''def double(n: int) -> int:
    return n * 2


old: str = double(1)
'''


@pytest.mark.parametrize("via", ["direct", "use_capability"])
def test_basedpyright_shows_exactly_the_new_type_error(lsp_session, via):
    cfg = python_config("basedpyright", **ON, servers={"python": {"settings": {
        "basedpyright": {"analysis": {"typeCheckingMode": "standard"}}}}})
    s = lsp_session(cfg, files={"m.py": TYPED}, surface="full" if via == "direct" else "lean")
    ready(s, "m.py")
    args = {"path": "m.py", "old_string": "    return n * 2\n",
            "new_string": '    label: int = "two"\n    return n * 2\n'}
    if via == "direct":
        [r] = s.run(ToolCall("t1", "edit_file", args))
    else:
        [r] = s.run(ToolCall("t1", "use_capability", {"action": "call",
                                                      "capability_id": "tool:edit_file",
                                                      "arguments": args}))
    assert not r.is_error, r.text
    lines = section(r.text).splitlines()
    assert lines[0] == "New diagnostics:" and len(lines) == 2, r.text
    assert lines[1].startswith('m.py:2:18 error [basedpyright] Type "Literal[\'two\']" is not '
                               'assignable to declared type "int"'), lines[1]
    assert "old" not in lines[1]  # the pre-existing error on line 6 is not repeated
    assert os.path.exists(s.path("m.py"))
