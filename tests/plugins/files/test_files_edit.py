"""edit_file and multi_edit matching (files.md §6.3, §6.4; statements 33-43)."""

from __future__ import annotations

from .conftest import err


def _session(fs, files):
    s = fs(files)
    for name in files:
        assert not s.call("read_file", path=name, limit=1).is_error
    return s


def edit(s, path="a.txt", **args):
    return s.call("edit_file", path=path, **args)


def test_not_unique_lists_each_place_and_replace_all_changes_them(fs, unchanged):  # 33
    s = _session(fs, {"a.txt": "x = 1\ny\nx = 1\nz\n"})
    before = unchanged(s.workspace, "a.txt")
    r = edit(s, old_string="x = 1", new_string="x = 2")
    assert err(r) == "FS_NOT_UNIQUE"
    assert r.text == ('FS_NOT_UNIQUE: old_string matches 2 places in a.txt: line 1 (then "y"), '
                      'line 3 (then "z"); include nearby distinctive lines, or set '
                      "replace_all=true to change every match")
    before.check()
    r = edit(s, old_string="x = 1", new_string="x = 2", replace_all=True)
    assert r.text.splitlines()[0] == "edited a.txt (2 replacements)"
    assert s.read("a.txt") == b"x = 2\ny\nx = 2\nz\n"


def test_read_file_prefixes_are_stripped(fs):  # 34
    s = _session(fs, {"a.txt": "alpha\nbeta\ngamma\n"})
    r = edit(s, old_string="1→alpha\n2→beta", new_string="ALPHA\nBETA")
    assert r.text.splitlines()[0] == "edited a.txt (fuzzy match)"
    assert s.read("a.txt") == b"ALPHA\nBETA\ngamma\n"


def test_leading_indentation_is_never_fuzzed(fs, unchanged):  # 35
    s = _session(fs, {"a.py": "def f():\n    return 1\n"})
    before = unchanged(s.workspace, "a.py")
    r = edit(s, "a.py", old_string="def f():\n        return 1\n", new_string="x")
    assert err(r) == "FS_NO_MATCH"
    before.check()


def test_closest_line_hint(fs):  # 36
    s = _session(fs, {"a.py": "    for layer in layers:\n        pass\n",
                      "long.txt": "x" * 200 + "\n"})
    r = edit(s, "a.py", old_string="for layr in layers:", new_string="y")
    assert r.text == ('FS_NO_MATCH: old_string was not found in a.py (closest line 1: '
                      '"for layer in layers:"); re-read that region and copy the text exactly, '
                      "indentation included")
    r = edit(s, "long.txt", old_string="x" * 150 + "y", new_string="z")
    assert f'(closest line 1: "{"x" * 79}…")' in r.text
    r = edit(s, "a.py", old_string="qqq", new_string="z")
    assert "closest" not in r.text


def test_tabs_adapt_in_a_makefile(fs):  # 37
    s = _session(fs, {"Makefile": "all:\n\techo hi\n"})
    r = edit(s, "Makefile", old_string="all:\n    echo hi\n", new_string="all:\n    echo bye\n")
    assert "(fuzzy match)" in r.text.splitlines()[0]
    assert s.read("Makefile") == b"all:\n\techo bye\n"


def test_blank_runs_match_runs_and_never_non_blank(fs, unchanged):  # 38
    s = _session(fs, {"a.txt": "a = 1\r\n\r\n\r\nb = 2\r\n", "b.txt": "a\nb\n"})
    r = edit(s, old_string="a = 1\n\nb = 2", new_string="a = 9\n\nb = 9")
    assert not r.is_error, r.text
    assert s.read("a.txt") == b"a = 9\r\n\r\nb = 9\r\n"
    before = unchanged(s.workspace, "b.txt")
    assert err(edit(s, "b.txt", old_string="a\n\nb", new_string="x")) == "FS_NO_MATCH"
    before.check()


def test_fuzzy_matches_must_be_unique_too(fs, unchanged):  # 39
    s = _session(fs, {"a.txt": "target   \ntarget   \n"})
    before = unchanged(s.workspace, "a.txt")
    r = edit(s, old_string="target\n", new_string="x\n")
    assert err(r) == "FS_NOT_UNIQUE"
    assert 'line 1 (then "target")' in r.text and "line 2 (then end of file)" in r.text
    before.check()


def test_equal_strings_are_an_argument_error_and_nothing_is_read(fs):  # 40
    s = fs({"a.txt": "a\n"})
    r = edit(s, old_string="a", new_string="a")
    assert r.error.kind == "invalid_arguments"
    assert s.session.observations() == {}
    r = s.call("multi_edit", path="a.txt", edits=[{"old_string": "a", "new_string": "b"},
                                                  {"old_string": "c", "new_string": "c"}])
    assert r.error.kind == "invalid_arguments" and "/edits/1" in r.text


def test_multi_edit_failure_names_the_edit_and_writes_nothing(fs, unchanged):  # 41
    s = _session(fs, {"a.txt": "alpha\nbeta\n"})
    before = unchanged(s.workspace, "a.txt")
    r = s.call("multi_edit", path="a.txt", edits=[{"old_string": "alpha", "new_string": "ALPHA"},
                                                  {"old_string": "missing", "new_string": "x"}])
    assert err(r) == "FS_NO_MATCH"
    assert r.text.startswith("FS_NO_MATCH: edit 2 of 2: old_string was not found in a.txt")
    before.check()


def test_multi_edit_applies_in_order_with_replace_all(fs):  # 42
    s = _session(fs, {"a.go": "package old\nOld()\nOld()\n"})
    r = s.call("multi_edit", path="a.go", edits=[
        {"old_string": "package old", "new_string": "package new"},
        {"old_string": "Old", "new_string": "New", "replace_all": True}])
    assert r.text.splitlines()[0] == "multi_edit a.go: 2 edits applied (3 replacements)"
    assert s.read("a.go") == b"package new\nNew()\nNew()\n"


def test_multi_edit_fuzzy_replace_all_and_empty_edits(fs):  # 43
    s = _session(fs, {"a.txt": "item   \nitem\t\n"})
    r = s.call("multi_edit", path="a.txt",
               edits=[{"old_string": "item\n", "new_string": "thing\n", "replace_all": True}])
    assert r.text.splitlines()[0] == "multi_edit a.txt: 1 edits applied (2 replacements) " \
        "(fuzzy match)"
    assert s.read("a.txt") == b"thing\nthing\n"
    assert s.call("multi_edit", path="a.txt", edits=[]).error.kind == "invalid_arguments"


def test_multi_edit_with_no_net_change_writes_nothing(fs, unchanged):
    s = _session(fs, {"a.txt": "a\n"})
    before = unchanged(s.workspace, "a.txt")
    r = s.call("multi_edit", path="a.txt", edits=[{"old_string": "a", "new_string": "b"},
                                                  {"old_string": "b", "new_string": "a"}])
    assert r.text == "multi_edit a.txt: no net change; nothing written"
    before.check()


def test_crlf_no_match_says_the_old_string_was_adapted(fs):
    s = _session(fs, {"a.txt": "one\r\ntwo\r\n"})
    r = edit(s, old_string="one\nthree", new_string="x")
    assert "the file uses CRLF; LF-only old_string is already adapted" in r.text


def test_edit_output_diff_is_cut_after_4_kib(fs):
    s = _session(fs, {"a.txt": "".join(f"line {i}\n" for i in range(2000))})
    r = edit(s, old_string="line 5\n", new_string="".join(f"new {i}\n" for i in range(1000)))
    assert "… (diff truncated; +1000/-1 lines in total)" in r.text
    assert len(r.text) < 4500


def test_edits_leave_the_rest_byte_identical(fs):
    body = "a\r\nb\nc\r\n\tdone  \n"
    s = _session(fs, {"m.txt": body})
    edit(s, "m.txt", old_string="b", new_string="B")
    assert s.read("m.txt") == b"a\r\nB\nc\r\n\tdone  \n"


def test_edit_diff_numbers_lines_of_the_whole_file(fs):
    import difflib

    body = "".join(f"line {i}\n" for i in range(1, 41))
    s = _session(fs, {"a.txt": body, "u.txt": body.replace("line 1\n", "línea 1\n")})
    for name in ("a.txt", "u.txt"):
        before = s.read(name).decode()
        r = edit(s, name, old_string="line 20\nline 21\n", new_string="LINE 20\n")
        after = s.read(name).decode()
        expected = "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                  f"a/{name}", f"b/{name}", lineterm=""))
        assert r.text == f"edited {name}\n{expected}"
