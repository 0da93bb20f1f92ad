"""The four tools on Python through the whole pipeline, with two real servers from PyPI:
jedi-language-server (navigation; it negotiates UTF-8 positions) and basedpyright (navigation
and type diagnostics; UTF-16 positions)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from callgate import sync
from callgate.testing import CallgateSession
from callgate_lsp import LSP

from .conftest import PLUGINS, descendants, fresh_diagnostics, need, python_config, wait_gone

SHAPES = '''"""Shapes."""


class Circle:
    """A circle of some radius."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        """The area of the circle."""
        return 3.14159 * self.radius ** 2


def make_circle(radius: float) -> Circle:
    """Build a circle."""
    return Circle(radius)
'''

MAIN = '''import os

from pkg.shapes import Circle, make_circle

label = "éé😀😀"; shape = make_circle(2.0)
print(shape.area(), Circle, os.getcwd())
'''

BAD = '''def double(n: int) -> int:
    return n * 2


result: str = double(3)
'''

#: basedpyright's "standard" rules (its default, "recommended", also warns about style)
STANDARD = {"python": {"settings": {"basedpyright": {"analysis": {
    "typeCheckingMode": "standard"}}}}}

FILES = {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES, "main.py": MAIN, "bad.py": BAD}


@pytest.fixture(scope="module", params=["jedi", "basedpyright"])
def nav(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[CallgateSession]:
    """One read-only session per server on the same project (servers start once per module)."""
    ws = tmp_path_factory.mktemp(f"nav-{request.param}")
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    before = descendants()
    host = sync.Host.boot(python_config(request.param, servers=STANDARD), plugins=list(PLUGINS),
                          entrypoints=False, surface="full")
    session = CallgateSession(host, host.open_session(ws), ws)
    session.server = request.param  # type: ignore[attr-defined]
    yield session
    host.close()
    assert not wait_gone(sorted(descendants() - before)), "servers left running"


def test_definition_across_two_files_with_non_ascii_before_the_symbol(nav):
    # the line has é (2 UTF-8 bytes, 1 UTF-16 unit) and 😀 (4 bytes, 2 units) before the symbol
    r = nav.call("lsp_definition", file="main.py", line=5, symbol="make_circle")
    assert not r.is_error, r.text
    assert r.text == "1 definition(s):\npkg/shapes.py:15  def make_circle(radius: float) -> Circle:"
    assert r.meta["encoding"] == {"jedi": "utf-8", "basedpyright": "utf-16"}[nav.server]


def test_definition_of_a_method_through_an_instance(nav):
    r = nav.call("lsp_definition", file="main.py", line=6, symbol="area")
    assert r.text == "1 definition(s):\npkg/shapes.py:10  def area(self) -> float:"


def test_references_include_the_declaration(nav):
    r = nav.call("lsp_references", file="pkg/shapes.py", line=15, symbol="make_circle")
    assert not r.is_error, r.text
    assert r.text.splitlines() == [
        "3 reference(s):",
        "main.py:3  from pkg.shapes import Circle, make_circle",
        "main.py:5  label = \"éé😀😀\"; shape = make_circle(2.0)",
        "pkg/shapes.py:15  def make_circle(radius: float) -> Circle:",
    ]


def test_hover_on_a_function_shows_its_signature(nav):
    r = nav.call("lsp_hover", file="main.py", line=5, symbol="make_circle")
    assert not r.is_error, r.text
    assert "make_circle(radius: float) -> Circle" in r.text
    assert "```" not in r.text


def test_a_definition_outside_the_workspace_is_shown_as_such(nav):
    r = nav.call("lsp_definition", file="main.py", line=6, symbol="getcwd")
    assert not r.is_error, r.text
    head, *rest = r.text.splitlines()
    assert re.fullmatch(r"\d+ definition\(s\):", head)
    assert rest and all(re.fullmatch(r"/\S+\.pyi?:\d+  \(outside the workspace\)", x)
                        for x in rest), r.text


def test_the_symbol_must_be_on_the_line(nav):
    r = nav.call("lsp_definition", file="main.py", line=1, symbol="make_circle")
    assert r.is_error and r.error.kind == "not_found"
    assert r.error.signature == "LSP_SYMBOL_NOT_ON_LINE"
    assert r.text == ('LSP_SYMBOL_NOT_ON_LINE: "make_circle" does not occur on line 1 of main.py, '
                      "which reads: 'import os'")
    r = nav.call("lsp_hover", file="main.py", line=99, symbol="x")
    assert r.error.signature == "LSP_NO_SUCH_LINE" and "main.py has 7 line(s)" in r.text


def test_arguments_are_validated_before_any_server_is_asked(nav):
    for args in ({"file": "main.py", "line": 0, "symbol": "x"},
                 {"file": "main.py", "line": "5", "symbol": "x"},
                 {"file": "main.py", "line": 5},
                 {"file": "main.py", "line": 5, "symbol": "x", "col": 3},
                 {"file": "main.py", "line": 5, "symbol": "x", "column": 0}):
        r = nav.call("lsp_definition", args)
        assert r.is_error and r.error.kind == "invalid_arguments", args


def test_paths_are_confined_to_the_workspace(nav, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("password = 1\n")
    link = nav.path("link.py")
    link.symlink_to(outside)
    try:
        for file in ("../secret.py", str(outside), "link.py"):
            r = nav.call("lsp_hover", file=file, line=1, symbol="password")
            assert r.is_error and r.error.kind == "outside_workspace", file
            assert "password" not in r.text
            r = nav.call("lsp_diagnostics", file=file)
            assert r.is_error and r.error.kind == "outside_workspace", file
    finally:
        link.unlink()


def test_files_a_server_cannot_take_are_refused(nav):
    r = nav.call("lsp_diagnostics", file="pkg")
    assert r.error.signature == "LSP_IS_DIRECTORY"
    r = nav.call("lsp_diagnostics", file="nope.py")
    assert r.error.kind == "not_found"
    nav.write("data.py", b"x = 1\x00\x01")
    r = nav.call("lsp_diagnostics", file="data.py")
    assert r.error.signature == "LSP_BINARY"
    nav.write("notes.txt", "hello\n")
    r = nav.call("lsp_diagnostics", file="notes.txt")
    assert r.error.signature == "LSP_NO_SERVER"
    assert r.text.startswith("no language server configured for .txt files (notes.txt)")


def test_diagnostics_of_a_type_error(nav):
    if nav.server != "basedpyright":
        pytest.skip("jedi-language-server reports syntax errors only")
    r = fresh_diagnostics(nav, "bad.py")
    assert not r.is_error, r.text
    head, *rest = r.text.splitlines()
    assert head == "1 diagnostic(s) in bad.py:"
    assert re.fullmatch(r'5:15 error \[basedpyright\] Type "int" is not assignable to declared '
                        r'type "str".* \(reportAssignmentType\)', rest[0]), rest[0]
    assert r.meta["fresh"] is True


def test_no_diagnostics_reads_so(nav):
    r = fresh_diagnostics(nav, "pkg/shapes.py")
    assert r.text == "no diagnostics for pkg/shapes.py"


def test_server_settings_answer_its_configuration_requests(lsp_session):
    # without [lsp.servers.python] settings basedpyright runs its "recommended" rules
    s = lsp_session(python_config("basedpyright"), files=FILES)
    r = fresh_diagnostics(s, "pkg/shapes.py")
    assert "(reportUnannotatedClassAttribute)" in r.text, r.text


# --- state that changes: one session per test -------------------------------------------------


def test_an_edit_made_through_bash_is_seen_by_the_next_query(lsp_session, no_leaks):
    s = lsp_session(python_config("basedpyright"), files={"mod.py": "def f() -> int:\n"
                                                                    "    return 1\n"})
    assert fresh_diagnostics(s, "mod.py").text == "no diagnostics for mod.py"
    s.expect_ok("bash", {"command": "printf 'bad: str = f()\\n' >> mod.py"})
    r = fresh_diagnostics(s, "mod.py")
    assert r.text.startswith("1 diagnostic(s) in mod.py:\n3:12 error [basedpyright] Type "
                             '"int" is not assignable'), r.text
    # same size and the old mtime: only the content digest shows the change
    st = os.stat(s.path("mod.py"))
    s.path("mod.py").write_text("def f() -> int:\n    return 1\nbad: int = f()\n")
    assert os.stat(s.path("mod.py")).st_size == st.st_size
    os.utime(s.path("mod.py"), ns=(st.st_atime_ns, st.st_mtime_ns))
    assert fresh_diagnostics(s, "mod.py").text == "no diagnostics for mod.py"


def test_a_changed_definition_is_found_where_it_moved(lsp_session, no_leaks):
    s = lsp_session(python_config("jedi"), files={
        "lib.py": "def helper():\n    return 1\n", "use.py": "from lib import helper\nhelper()\n"})
    assert s.expect_ok("lsp_definition", {"file": "use.py", "line": 2, "symbol": "helper"}) == \
        "1 definition(s):\nlib.py:1  def helper():"
    s.expect_ok("bash", {"command": "printf '# moved\\n\\n' | cat - lib.py > t && mv t lib.py"})
    assert s.expect_ok("lsp_definition", {"file": "use.py", "line": 2, "symbol": "helper"}) == \
        "1 definition(s):\nlib.py:3  def helper():"


def test_a_missing_server_gives_its_install_hint(lsp_session, no_leaks):
    s = lsp_session({"lsp": {"servers": {"python": {
        "command": "no-such-language-server-xyz", "install_hint": "pip install xyz-ls"}}}},
        files={"a.py": "x = 1\n"})
    r = s.call("lsp_hover", file="a.py", line=1, symbol="x")
    assert r.is_error and r.error.signature == "LSP_SERVER_NOT_FOUND"
    assert r.text == ('language server "no-such-language-server-xyz" not found (looked in '
                      "callgate's environment, on PATH and in [lsp] server_paths); install it: "
                      "pip install xyz-ls")
    assert s.session.extension(LSP).servers() == []


def test_a_default_server_that_is_not_installed_names_the_default_hint(
        lsp_session, no_leaks, monkeypatch, tmp_path):
    bindir = tmp_path / "bin"  # bash (the shell plugin needs one) and no gopls
    bindir.mkdir()
    (bindir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", str(bindir))  # gopls is not in callgate's environment either
    s = lsp_session({}, files={"main.go": "package main\n"})
    r = s.call("lsp_diagnostics", file="main.go")
    assert r.text == ('language server "gopls" not found (looked in callgate\'s environment, on '
                      "PATH and in [lsp] server_paths); install it: go install "
                      "golang.org/x/tools/gopls@latest")


def test_the_tools_are_hidden_and_reached_through_use_capability(lsp_session, no_leaks):
    s = lsp_session(python_config("jedi"), files=FILES, surface="lean")
    assert not [n for n in s.session.tool_names() if n.startswith("lsp_")]
    r = s.call("lsp_definition", file="main.py", line=5, symbol="make_circle")
    assert r.is_error and r.error.kind == "unavailable"
    r = s.call("use_capability", {"action": "call", "capability_id": "tool:lsp_definition",
                                  "arguments": {"file": "main.py", "line": 5,
                                                "symbol": "make_circle"}})
    assert r.text == "1 definition(s):\npkg/shapes.py:15  def make_circle(radius: float) -> Circle:"


def test_replay_reaches_the_tools_through_the_entry_point(tmp_path: Path):
    from callgate.testing import run_replay

    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    cfg = tmp_path / "callgate.toml"
    cfg.write_text(f'[lsp.servers.python]\ncommand = "{need("jedi-language-server")}"\n'
                   'sandbox = "if_available"\n')
    out = run_replay([{"id": "d", "name": "lsp_definition",
                       "arguments": {"file": "main.py", "line": 5, "symbol": "make_circle"}}],
                     ws, "--surface", "full", "--config", str(cfg),
                     env={"CALLGATE_LOAD_PLUGINS": "lsp"})
    assert out[0]["id"] == "d" and out[0]["is_error"] is False
    assert out[0]["content"] == ("1 definition(s):\npkg/shapes.py:15  def make_circle(radius: "
                                 "float) -> Circle:")


def test_diagnostics_list_errors_and_warnings_unless_asked_for_all(lsp_session, no_leaks):
    """Issue 35, 4: the contract lists errors and warnings; hints only with severity="all"."""
    s = lsp_session(python_config("basedpyright", servers=STANDARD), files={
        "h.py": "def f() -> int:\n    unused = 1\n    return 2\n\n\nbad: str = f()\n"})
    r = fresh_diagnostics(s, "h.py")
    assert r.text.splitlines()[0] == "1 diagnostic(s) in h.py:", r.text
    assert r.text.splitlines()[1].startswith('6:12 error [basedpyright] Type "int" is not '
                                             'assignable'), r.text
    assert r.text.splitlines()[2] == ('(1 information and hint(s) not listed; severity="all" '
                                      "lists them)"), r.text
    every = s.call("lsp_diagnostics", file="h.py", severity="all")
    assert every.text.splitlines()[1] == ('2:5 hint [basedpyright] Variable "unused" is not '
                                         'accessed (reportUnusedVariable)'), \
        every.text
    errors = s.call("lsp_diagnostics", file="h.py", severity="errors")
    assert errors.meta["count"] == 1 and errors.meta["hidden"] == 1
    bad = s.call("lsp_diagnostics", file="h.py", severity="hints")
    assert bad.is_error and bad.error.kind == "invalid_arguments"
