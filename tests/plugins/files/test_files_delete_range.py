"""delete_range (files.md §6.5; statements 44-47)."""

from __future__ import annotations

from .conftest import err


def _session(fs, files):
    s = fs(files)
    for name in files:
        s.call("read_file", path=name, limit=1)
    return s


def dr(s, path, start, end, **kw):
    return s.call("delete_range", path=path, start_anchor=start, end_anchor=end, **kw)


def test_inclusive_and_exclusive_ranges(fs, unchanged):  # 44
    s = _session(fs, {"a.txt": "a\nb\nc\nd\n", "e.txt": "a\nb\nc\nd\n", "n.txt": "a\nb\n"})
    r = dr(s, "a.txt", "b", "c")
    lines = r.text.splitlines()
    assert lines[0] == "deleted lines 2-3 of a.txt (2 lines)" and "-b" in lines and "-c" in lines
    assert s.read("a.txt") == b"a\nd\n"
    r = dr(s, "e.txt", "a", "d", inclusive=False)
    assert s.read("e.txt") == b"a\nd\n"
    before = unchanged(s.workspace, "n.txt")
    r = dr(s, "n.txt", "a", "b", inclusive=False)
    assert r.text == "nothing between lines 1 and 2 of n.txt; nothing changed"
    before.check()


def test_range_errors(fs, unchanged):  # 45
    s = _session(fs, {"a.txt": "a\nb\nc\n", "x.txt": "x\nx\n"})
    before = unchanged(s.workspace, "a.txt", "x.txt")
    r = dr(s, "a.txt", "c", "b")
    assert r.text == "FS_INVALID_RANGE: start_anchor (line 3) comes after end_anchor (line 2); " \
        "swap them"
    r = dr(s, "a.txt", "b ", "c")
    assert r.text == "FS_NO_MATCH: start_anchor matches no whole line of a.txt; copy one line " \
        "exactly, indentation included\nwhat differs: line 2 has no trailing whitespace, but " \
        "start_anchor ends with 1 space"
    r = dr(s, "x.txt", "x", "x")
    assert err(r) == "FS_NOT_UNIQUE" and "lines 1, 2" in r.text
    assert err(dr(s, "a.txt", "b", "b", inclusive=False)) == "FS_INVALID_RANGE"
    before.check()


def test_untouched_bytes_stay_and_a_final_unterminated_line(fs):  # 46
    s = _session(fs, {"m.txt": "a\r\nb\nc\r\nd\n", "t.txt": "a\nb\nc"})
    dr(s, "m.txt", "b", "b")
    assert s.read("m.txt") == b"a\r\nc\r\nd\n"
    r = dr(s, "t.txt", "c", "c")
    assert r.text.startswith("deleted lines 3-3 of t.txt (1 lines)")
    assert s.read("t.txt") == b"a\nb"


def test_brace_guard_refuses_cutting_a_block(fs, unchanged):  # 47
    s = _session(fs, {"f.go": "func f() {\n\treturn\n}\n", "f.txt": "func f() {\n\treturn\n}\n"})
    before = unchanged(s.workspace, "f.go")
    r = dr(s, "f.go", "func f() {", "\treturn")
    assert r.text == "FS_INVALID_RANGE: lines 1-2 would cut the block at lines 1-3; widen or " \
        "narrow the range"
    before.check()
    assert not dr(s, "f.txt", "func f() {", "\treturn").is_error
    assert not dr(s, "f.go", "func f() {", "}").is_error


def test_brace_guard_ignores_braces_in_strings_and_comments(fs):
    src = 'x := "{"\n// }\nfunc g() {\n\ty := \'}\'\n}\nz := 1\n'
    s = _session(fs, {"g.go": src})
    assert err(dr(s, "g.go", "func g() {", "\ty := '}'")) == "FS_INVALID_RANGE"
    assert not dr(s, "g.go", 'x := "{"', 'x := "{"').is_error
    assert s.read("g.go") == src[len('x := "{"\n'):].encode()
