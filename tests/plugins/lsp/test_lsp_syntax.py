"""Code tokens of a line, by grammar (issue 35, 3): the parser side of the positions
(`callgate_lsp._syntax`) for every grammar the default servers have."""

from __future__ import annotations

import pytest
from callgate_lsp import _syntax


@pytest.mark.parametrize(("ext", "text", "symbol", "columns"), [
    (".go", 'fmt.Println("Add", Add(1, 2)) // Add them\n', "Add", [19]),
    (".go", "s := `Add` + Add2()\n", "Add", []),  # only in a raw string (Add2 is longer)
    (".c", '/* add */ int n = add(1, 2); char *s = "add";\n', "add", [18]),
    (".cpp", 'std::string s = "v"; auto v = std::vector<int>{}; // v\n', "v", [26]),
    (".cpp", "std::vector<int> xs;\n", "std::vector", [5]),
    (".ts", 'const s = `add ${add(1)}`; // add\n', "add", [17]),
    (".js", "const re = /add/; add();\n", "add", [18]),
    (".rs", 'let s = "add"; add(); // add\n', "add", [15]),
    (".java", 'String s = "add"; add(); /* add */\n', "add", [18]),
    (".sh", 'echo "$name name" # name\n', "name", [7]),
    (".py", 'x = f"{x} x"  # x\n', "x", [0, 7]),
])
def test_code_tokens_by_grammar(ext, text, symbol, columns):
    try:
        found = _syntax.candidates(ext, text, 0, symbol)
    except _syntax.OnlyInText:
        found = []
    assert [c.column for c in found] == columns, found


def test_a_file_without_a_grammar_is_matched_by_whole_words():
    found = _syntax.candidates(".zz", "ab abc ab\n", 0, "ab")
    assert [(c.start, c.end) for c in found] == [(0, 2), (7, 9)]
    with pytest.raises(_syntax.Ambiguous):
        _syntax.choose(found, None)
    assert _syntax.choose(found, 8).start == 7


def test_a_line_inside_a_multi_line_string_is_text():
    text = 'x = """\nhelper here\n"""\nhelper()\n'
    with pytest.raises(_syntax.OnlyInText):
        _syntax.candidates(".py", text, 1, "helper")
    assert [c.column for c in _syntax.candidates(".py", text, 3, "helper")] == [0]
