"""The right symbol (issue 35, 3): ``symbol`` + ``line`` resolve through the file's syntax
(tree-sitter) to a token of code, never to the same text inside a string or a comment; a name
that is code more than once on the line is an error listing the columns, and ``column``
chooses. Through the pipeline with basedpyright (the other grammars: test_lsp_syntax.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from callgate import sync
from callgate.testing import CallgateSession

from .conftest import PLUGINS, descendants, python_config, wait_gone

SHAPES = '''class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = radius


def make_circle(radius: float) -> Circle:
    return Circle(radius)
'''

MAIN = '''from shapes import make_circle

msg = "make_circle"; shape = make_circle(2.0)
note = "str"; text = str(msg)  # str() of the message
print("make_circle")
'''


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CallgateSession]:
    ws = tmp_path_factory.mktemp("positions")
    (ws / "shapes.py").write_text(SHAPES)
    (ws / "main.py").write_text(MAIN)
    before = descendants()
    host = sync.Host.boot(python_config("basedpyright"), plugins=list(PLUGINS),
                          entrypoints=False, surface="full")
    yield CallgateSession(host, host.open_session(ws), ws)
    host.close()
    assert not wait_gone(sorted(descendants() - before))


def test_a_name_that_is_also_in_a_string_before_it_resolves_to_the_code(py):
    r = py.call("lsp_definition", file="main.py", line=3, symbol="make_circle")
    assert r.text == "1 definition(s):\nshapes.py:6  def make_circle(radius: float) -> Circle:"


def test_a_builtin_named_in_a_string_and_a_comment_is_found_in_the_code(py):
    r = py.call("lsp_hover", file="main.py", line=4, symbol="str")
    assert not r.is_error, r.text
    assert "class str" in r.text, r.text  # the call's str, not the string literal "str"


def test_a_name_only_in_a_string_is_an_error_that_says_so(py):
    r = py.call("lsp_definition", file="main.py", line=5, symbol="make_circle")
    assert r.is_error and r.error.signature == "LSP_SYMBOL_NOT_IN_CODE"
    assert r.text == ('LSP_SYMBOL_NOT_IN_CODE: "make_circle" occurs on line 5 of main.py only '
                      "inside a string or a comment, which reads: 'print(\"make_circle\")'; "
                      "name a symbol of the code")


def test_a_name_that_is_code_twice_on_the_line_lists_the_columns(py):
    r = py.call("lsp_definition", file="shapes.py", line=3, symbol="radius")
    assert r.is_error and r.error.kind == "invalid_arguments"
    # a tool's own argument problem carries the contract's signature (issue 36.5)
    assert r.error.signature == py.argument_signature("lsp_definition", "LSP_SYMBOL_AMBIGUOUS")
    assert r.text == ('LSP_SYMBOL_AMBIGUOUS: "radius" is code 2 times on line 3 of shapes.py, '
                      "at columns 14 ('radius = radius'), 23 ('radius'); call again with "
                      f"column set to the one you mean\nsignature: {r.error.signature}")
    assert r.meta.get("columns", r.error and [14, 23]) == [14, 23]
    # the parameter, and the attribute
    r = py.call("lsp_definition", file="shapes.py", line=3, symbol="radius", column=23)
    assert r.text == "1 definition(s):\nshapes.py:2  def __init__(self, radius: float) -> None:"
    r = py.call("lsp_definition", file="shapes.py", line=3, symbol="radius", column=16)
    assert r.text == "1 definition(s):\nshapes.py:3  self.radius = radius"
    r = py.call("lsp_hover", file="shapes.py", line=3, symbol="self.radius")
    assert not r.is_error and "radius: float" in r.text, r.text


def test_a_column_that_is_not_the_symbol_is_refused(py):
    r = py.call("lsp_definition", file="shapes.py", line=3, symbol="radius", column=1)
    assert r.error.signature == py.argument_signature("lsp_definition",
                                                      "LSP_SYMBOL_NOT_AT_COLUMN")
    assert r.text == ('LSP_SYMBOL_NOT_AT_COLUMN: "radius" is not at column 1 of line 3 of '
                      f"shapes.py; it is at columns 14, 23\nsignature: {r.error.signature}")
