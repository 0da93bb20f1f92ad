"""delete_symbol through the full pipeline (search.md §6, statements 30-36)."""

from __future__ import annotations

import os
import stat

from callgate import Decision, hookimpl
from callgate_code._languages import BY_EXTENSION
from callgate_code._symbols import parse


def snapshot(s, rel):
    """Bytes, mode and mtime of a file, and the directory's names (no stray temp files)."""
    path = s.workspace / rel
    st = os.stat(path)
    return path.read_bytes(), st.st_mode, st.st_mtime_ns, sorted(os.listdir(path.parent))


def parses(rel: str, data: bytes) -> bool:
    grammar = BY_EXTENSION[os.path.splitext(rel)[1]]
    return parse(grammar, data).error_line is None


def read(s, rel):
    r = s.call("read_file", {"path": rel})
    assert not r.is_error, r.text
    return r


def delete(s, **args):
    return s.call("delete_symbol", args)


GO_TWO = "package x\n\nfunc A() {}\n\nfunc B() {}\n\nfunc C() {}\n"


def test_needs_an_observation_then_needs_no_reread(code):  # §6.30
    s = code({"x.go": GO_TWO})
    before = snapshot(s, "x.go")
    r = delete(s, path="x.go", name="B")
    assert r.error.kind == "not_observed" and r.error.signature == "FS_NOT_OBSERVED"
    assert snapshot(s, "x.go") == before
    window = s.call("read_file", {"path": "x.go", "offset": 2, "limit": 1})  # one line only
    assert not window.is_error and "func B" not in window.text
    r = delete(s, path="x.go", name="B")
    assert not r.is_error, r.text
    r = delete(s, path="x.go", name="C")
    assert not r.is_error, r.text
    assert s.read("x.go") == b"package x\n\nfunc A() {}\n"


def test_go_function_goes_with_its_doc_comment(code):  # §6.31
    src = ("package x\n\nfunc Before() {}\n\n// Foo does things.\n// It has two lines.\n"
           "func Foo() int {\n\treturn 1\n}\n\nfunc After() {}\n")
    s = code({"x.go": src})
    read(s, "x.go")
    r = delete(s, path="x.go", name="Foo")
    assert not r.is_error, r.text
    out = r.text.split("\n")
    assert out[0] == "deleted func Foo (lines 5-10) from x.go"
    assert out[1] == "--- a/x.go" and out[2] == "+++ b/x.go"
    assert "-// Foo does things." in out and "-func Foo() int {" in out
    after = s.read("x.go")
    assert after == b"package x\n\nfunc Before() {}\n\nfunc After() {}\n"
    assert parses("x.go", after)


def test_go_ambiguous_methods_list_candidates(code):  # §6.32
    src = ("package x\n\ntype A struct{}\ntype B struct{}\n\nfunc (a *A) Start() {}\n\n"
           "func (b B) Start() {}\n")
    s = code({"x.go": src})
    read(s, "x.go")
    before = snapshot(s, "x.go")
    r = delete(s, path="x.go", name="Start")
    assert r.is_error and r.error.signature == "CODE_AMBIGUOUS"
    assert r.text.split("\n") == [
        'delete_symbol: "Start" matches 2 symbols in x.go; pass kind and/or parent:',
        "  line 6: method Start (on A)",
        "  line 8: method Start (on B)",
    ]
    assert snapshot(s, "x.go") == before
    r = delete(s, path="x.go", name="Start", parent="B")
    assert not r.is_error, r.text
    assert s.read("x.go") == (b"package x\n\ntype A struct{}\ntype B struct{}\n\n"
                              b"func (a *A) Start() {}\n")
    r = delete(s, path="x.go", name="Start", parent="C")
    assert r.text == ('delete_symbol: no symbol named "Start" on C in x.go; found: line 6: '
                      "method Start (on A)")


def test_go_group_specs_and_names_declared_together(code):  # §6.33
    s = code({"c.go": "package x\n\nconst (\n\tA = 1\n\tB = 2\n)\n",
              "v.go": "package x\n\nvar a, b = 1, 2\n"})
    read(s, "c.go")
    r = delete(s, path="c.go", name="B")
    assert not r.is_error and r.text.startswith("deleted const B (lines 5-5) from c.go")
    assert s.read("c.go") == b"package x\n\nconst (\n\tA = 1\n)\n"
    r = delete(s, path="c.go", name="A")
    assert not r.is_error, r.text
    assert s.read("c.go") == b"package x\n"
    read(s, "v.go")
    before = snapshot(s, "v.go")
    r = delete(s, path="v.go", name="a")
    assert r.text == ('delete_symbol: "a" is declared together with b; use delete_range or '
                      "edit_file")
    assert snapshot(s, "v.go") == before


def test_go_types_and_kind_filters(code):  # §5 candidates
    src = ("package x\n\n// Shape is a shape.\ntype Shape interface {\n\tArea() float64\n}\n\n"
           "type (\n\t// ID names things.\n\tID string\n\tKey = string\n)\n\n"
           "func Shape2() {}\n")
    s = code({"t.go": src})
    read(s, "t.go")
    r = delete(s, path="t.go", name="Shape", kind="function")
    assert r.text == ('delete_symbol: no func named "Shape" in t.go; found: line 4: interface '
                      "Shape")
    r = delete(s, path="t.go", name="ID", kind="type")
    assert not r.is_error and r.text.startswith("deleted type ID (lines 9-10) from t.go")
    r = delete(s, path="t.go", name="Shape", kind="type")
    assert not r.is_error and r.text.startswith("deleted interface Shape (lines 3-7)")
    assert s.read("t.go") == b"package x\n\ntype (\n\tKey = string\n)\n\nfunc Shape2() {}\n"
    r = delete(s, path="t.go", name="Nope")
    assert r.text == 'delete_symbol: no symbol named "Nope" in t.go'


PY_CLASS = ('class Svc:\n    """Doc."""\n\n    # note\n    @property\n    def name(self):\n'
            '        return "n"\n\n    def run(self):\n        return 1\n')


def test_python_method_with_comment_and_decorator(code):  # §6.34
    s = code({"m.py": PY_CLASS})
    read(s, "m.py")
    r = delete(s, path="m.py", name="name")
    assert not r.is_error, r.text
    assert r.text.startswith("deleted method Svc.name (lines 4-8) from m.py")
    assert s.read("m.py") == (b'class Svc:\n    """Doc."""\n\n    def run(self):\n'
                              b"        return 1\n")


def test_python_top_level_function_keeps_two_blank_lines(code):  # §6.34
    src = "def a():\n    pass\n\n\ndef f():\n    pass\n\n\ndef b():\n    pass\n"
    s = code({"m.py": src})
    read(s, "m.py")
    r = delete(s, path="m.py", name="f")
    assert not r.is_error and r.text.startswith("deleted func f (lines 5-8) from m.py")
    assert s.read("m.py") == b"def a():\n    pass\n\n\ndef b():\n    pass\n"
    r = delete(s, path="m.py", name="b")
    assert not r.is_error and s.read("m.py") == b"def a():\n    pass\n"


def test_python_class_level_assignment(code):  # §6.34
    src = "x = 0\n\n\nclass Cfg:\n    x = 1\n    y: int = 2\n"
    s = code({"c.py": src})
    read(s, "c.py")
    r = delete(s, path="c.py", name="x")
    assert r.error.signature == "CODE_AMBIGUOUS"
    r = delete(s, path="c.py", name="x", kind="assignment", parent="Cfg")
    assert not r.is_error and r.text.startswith("deleted var Cfg.x (lines 5-5) from c.py")
    assert s.read("c.py") == b"x = 0\n\n\nclass Cfg:\n    y: int = 2\n"


def test_refusals_leave_the_file_untouched(code):  # §6.35
    s = code({"only.py": "class A:\n    def m(self):\n        pass\n", "bad.py": "def f(:\n",
              "shared.py": "x = 1; y = 2\n"})
    for rel in ("only.py", "bad.py", "shared.py"):
        read(s, rel)
    before = snapshot(s, "only.py")
    r = delete(s, path="only.py", name="m")
    assert r.text == ('delete_symbol: deleting "m" would break parsing of only.py; use '
                      "delete_range")
    assert snapshot(s, "only.py") == before
    before = snapshot(s, "bad.py")
    r = delete(s, path="bad.py", name="f")
    assert r.text == ("delete_symbol: bad.py does not parse cleanly (first error at line 1); "
                      "fix it or use delete_range")
    assert snapshot(s, "bad.py") == before
    r = delete(s, path="shared.py", name="x")
    assert r.text == 'delete_symbol: "x" shares line 1 with other code; use edit_file'


def test_other_languages_are_not_executed(code):  # §6.35
    s = code({"a.ts": "function f() {}\n"})
    for _ in range(2):
        r = delete(s, path="a.ts", name="f")
        assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
        assert "use delete_range" in r.text and ".ts" in r.text
        read(s, "a.ts")
    assert s.read("a.ts") == b"function f() {}\n"


def test_line_endings_bom_and_mode_are_kept(code):  # §6.36
    go = b"package x\r\n\r\nfunc A() {}\r\n\r\n// B doc\r\nfunc B() {}\r\n\r\nfunc C() {}\r\n"
    py = b"\xef\xbb\xbfdef a():\r\n    pass\r\n\r\n\r\ndef b():\r\n    pass\r\n"
    s = code({"x.go": go, "y.py": py})
    os.chmod(s.workspace / "x.go", 0o640)
    read(s, "x.go")
    read(s, "y.py")
    assert not delete(s, path="x.go", name="B").is_error
    data = s.read("x.go")
    assert data == b"package x\r\n\r\nfunc A() {}\r\n\r\nfunc C() {}\r\n"
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(os.stat(s.workspace / "x.go").st_mode) == 0o640
    assert not delete(s, path="y.py", name="b").is_error
    assert s.read("y.py") == b"\xef\xbb\xbfdef a():\r\n    pass\r\n"


def test_a_change_after_the_read_is_refused(code):  # §5 flow step 2
    s = code({"x.go": GO_TWO})
    read(s, "x.go")
    (s.workspace / "x.go").write_bytes(GO_TWO.encode() + b"\nfunc D() {}\n")
    before = snapshot(s, "x.go")
    r = delete(s, path="x.go", name="B")
    assert r.error.kind == "stale_version"
    assert snapshot(s, "x.go") == before


def test_invalid_utf8_is_refused(code):  # §5 flow step 3
    s = code({"x.py": b"s = 'caf\xe9'\ndef f():\n    pass\n"})
    read(s, "x.py")
    r = delete(s, path="x.py", name="f")
    assert r.text.startswith("delete_symbol: x.py is not valid UTF-8")


def test_preview_is_the_diff_and_writes_nothing(code):  # approval preview
    seen = []

    class Approver:
        @hookimpl
        def callgate_ask_permission(self, call, tool, session, preview):
            seen.append(preview)
            return Decision("deny", reason="not now")

    s = code({"x.go": GO_TWO}, plugins=(Approver(),),
             config={"permissions": {"ask": ["delete_symbol"]}})
    read(s, "x.go")
    before = snapshot(s, "x.go")
    r = delete(s, path="x.go", name="B")
    assert r.error.kind == "blocked"
    assert seen and seen[0].startswith("--- a/x.go\n+++ b/x.go\n@@")
    assert "-func B() {}" in seen[0]
    assert snapshot(s, "x.go") == before
