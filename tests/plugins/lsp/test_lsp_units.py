"""The pure parts of the lsp plugin: columns in each encoding, the server table, rendering, the
new-diagnostics rule. (Everything a server answers is tested through the host elsewhere.)"""

from __future__ import annotations

import pytest
from callgate import ToolError
from callgate_lsp import DEFAULTS, ServerTable
from callgate_lsp._after_edit import Report, introduced
from callgate_lsp._positions import from_units, split_lines, to_units
from callgate_lsp._render import hover_text
from callgate_lsp._syntax import by_text
from lsprotocol import types


def test_lines_split_only_at_lsp_breaks():
    assert split_lines("a\r\nb\rc\nd\x0ce\u2028f") == ["a", "b", "c", "d\x0ce\u2028f"]
    assert split_lines("x\n") == ["x", ""]


def test_symbol_found_by_text_as_whole_words_first():
    """The rule for files without a grammar (and what the parser falls back to)."""
    def columns(line: str, symbol: str) -> list[int]:
        return [c.start for c in by_text(line, symbol)]

    assert columns("greeting = greet(x)", "greet") == [11]
    assert columns("greeting = 1", "greet") == [0]  # no whole word: the first occurrence
    assert columns("a.b", "b") == [2]
    assert columns("x = y", "z") == []
    assert columns("x->y", "->") == [1]  # not an identifier: plain search
    assert columns("f(f)", "f") == [0, 2]


@pytest.mark.parametrize(("encoding", "expected"), [("utf-8", 14), ("utf-16", 11),
                                                    ("utf-32", 10)])
def test_columns_count_the_negotiated_units(encoding, expected):
    line = 's = "é😀"; t'  # é: 2 bytes / 1 unit; 😀: 4 bytes / 2 units / 1 code point
    col = line.index("t", 5)
    assert col == 10
    assert to_units(line, col, encoding) == expected
    assert from_units(line, expected, encoding) == col


def test_a_column_inside_a_character_counts_as_that_character():
    assert from_units("😀x", 1, "utf-16") == 1
    assert from_units("éx", 1, "utf-8") == 1
    assert from_units("ab", 99, "utf-16") == 2


def test_default_table_covers_the_named_languages():
    table = ServerTable()
    for ext, language in ((".py", "python"), (".ts", "typescript"), (".jsx", "typescript"),
                          (".go", "go"), (".rs", "rust"), (".cpp", "c"), (".h", "c")):
        spec = table.for_path(f"x{ext}")
        assert spec is not None and spec.language == language, ext
        assert spec.install_hint
    assert table.for_path("x.tsx").language_id("x.tsx") == "typescriptreact"
    assert table.for_path("X.PY").language == "python"
    assert all(not s.command.startswith(("http", "/")) for s in DEFAULTS.values())


def test_overrides_replace_add_and_disable():
    table = ServerTable({
        "python": {"command": "jedi-language-server"},
        "scripted": {"command": "srv", "args": ["--x"], "extensions": [".scr", ".py"],
                     "language_id": "scr", "install_hint": "make srv"},
        "go": {"enabled": False},
    })
    py = table.specs["python"]
    assert (py.command, py.args, py.alternatives) == ("jedi-language-server", (), ())
    assert table.for_path("a.py").language == "scripted"  # a configured language wins
    assert table.for_path("a.scr").language_id("a.scr") == "scr"
    assert table.for_path("a.pyi").language == "python"
    assert table.for_path("a.go") is None
    with pytest.raises(ToolError, match=r"server_paths\); install it: make srv"):
        table.specs["scripted"].launch()


def test_a_new_language_needs_command_and_extensions():
    with pytest.raises(ToolError, match=r"\[lsp.servers.zz\] adds a language"):
        ServerTable({"zz": {"command": "zz-ls"}})


def test_hover_markdown_becomes_plain_text():
    hover = types.Hover(contents=types.MarkupContent(
        kind=types.MarkupKind.Markdown,
        value="```python\ndef f(a: int) -> str\n```\n---\nDoes \\*things\\*&nbsp;well"))
    assert hover_text(hover) == "def f(a: int) -> str\n---\nDoes *things* well"
    assert hover_text(None) == ""
    assert hover_text(types.Hover(contents=[
        types.MarkedStringWithLanguage(language="go", value="func F()"), "doc"])) == \
        "func F()\n\ndoc"


def _diag(line: int, message: str, severity: int = 1) -> types.Diagnostic:
    return types.Diagnostic(range=types.Range(start=types.Position(line=line, character=0),
                                              end=types.Position(line=line, character=1)),
                            message=message, severity=types.DiagnosticSeverity(severity),
                            source="t")


def test_new_diagnostics_ignore_old_ones_that_moved():
    before = Report([_diag(0, "bad x")], ["x = 1"], "utf-16")
    after = Report([_diag(1, "bad x"), _diag(0, "bad y"), _diag(2, "bad x")],
                   ["y = 2", "x = 1", "x = 1"], "utf-16")
    assert [(d.range.start.line, d.message) for d in introduced(before, after)] == \
        [(0, "bad y"), (2, "bad x")]  # one "bad x" on "x = 1" was there: the second is new


# --- issue 35: watchers and readiness ----------------------------------------------------------


def test_watcher_registrations_decide_which_changes_a_server_hears():
    from callgate_lsp._watched import Watchers

    w = Watchers("/ws", [".go"])
    assert w.wants("/ws/a.go", "changed") and not w.wants("/ws/a.txt", "changed")  # no reg.
    w.register("gopls", {"watchers": [{"globPattern": "**/*.{go,mod,sum,work}", "kind": 7},
                                      {"globPattern": "{/ws/lib}", "kind": 7}]})
    assert w.wants("/ws/main.go", "created") and w.wants("/ws/lib/lib.go", "deleted")
    assert w.wants("/ws/go.mod", "changed") and not w.wants("/ws/README.md", "changed")
    w.register("pyright", {"watchers": [
        {"globPattern": {"baseUri": "file:///stdlib", "pattern": "**"}, "kind": 7},
        {"globPattern": "**/pyrightconfig.json", "kind": 2}]})
    assert w.wants("/ws/sub/pyrightconfig.json", "changed")
    assert w.wants("/stdlib/os.py", "changed") and not w.wants("/elsewhere/os.py", "changed")
    w.unregister("gopls")
    assert not w.wants("/ws/main.go", "changed")  # pyright's registration only now
    assert not w.wants("/ws/pyrightconfig.json", "deleted")  # its kind is change only
    w.unregister("pyright")
    assert w.wants("/ws/main.go", "changed")  # back to the extensions


def test_readiness_needs_a_sign_of_work_then_quiet():
    from callgate_lsp._readiness import FALLBACK_S, SETTLE_S, Readiness

    now = [100.0]
    r = Readiness(clock=lambda: now[0])
    now[0] += SETTLE_S * 2
    assert not r.ready  # quiet, but no sign it has worked on the project yet
    r.progress("t", "begin", "Loading packages")
    now[0] += 10
    assert not r.ready and r.busy  # a progress is open
    r.progress("t", "end")
    assert not r.ready  # not quiet yet
    now[0] += SETTLE_S
    assert r.ready and not r.busy
    r.progress("u", "begin")
    assert r.ready  # sticky: later work is indexing, not loading
    silent = Readiness(clock=lambda: now[0])
    now[0] += FALLBACK_S
    assert silent.ready  # a server that never says anything: after the fallback quiet
