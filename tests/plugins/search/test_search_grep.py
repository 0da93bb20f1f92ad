"""grep through the full pipeline, under both engines (search.md §6, statements 2-16)."""

from __future__ import annotations

import os
import sys

import callgate_search
import pytest
from callgate import Host

from tests import faults

from .helpers import lines


def test_prints_path_line_text_for_the_matching_line_only(search):  # §6.2
    s = search({"a.go": "func Foo() {}\n", "b.go": "var x = 1\n"})
    r = s.call("grep", {"pattern": "func "})
    assert not r.is_error
    assert r.text == "a.go:1:func Foo() {}"


def test_hidden_files_are_skipped_unless_named(search):  # §6.3
    s = search({".env": "needle\n", ".hidden/x.txt": "needle\n"})
    assert s.call("grep", {"pattern": "needle"}).text == "(no matches)"
    assert s.call("grep", {"pattern": "needle", "path": ".env"}).text == ".env:1:needle"


def test_gitignore_rules_apply_with_nesting_and_negation(search):  # §6.4
    s = search({".gitignore": "*.log\nbuild/\n", "sub/.gitignore": "!keep.log\n",
                "a.log": "needle\n", "build/x.txt": "needle\n", "sub/keep.log": "needle\n",
                "sub/b.log": "needle\n"})
    assert not (s.workspace / ".git").exists()
    assert s.call("grep", {"pattern": "needle"}).text == "sub/keep.log:1:needle"
    assert s.call("grep", {"pattern": "needle", "path": "build"}).text == "build/x.txt:1:needle"
    assert s.call("grep", {"pattern": "needle", "path": "sub"}).text == "sub/keep.log:1:needle"


def test_node_modules_is_pruned_unless_named(search):  # §6.5
    s = search({"node_modules/m.js": "needle\n"})
    assert s.call("grep", {"pattern": "needle"}).text == "(no matches)"
    r = s.call("grep", {"pattern": "needle", "path": "node_modules"})
    assert r.text == "node_modules/m.js:1:needle"


def test_binary_files_are_skipped_in_walks_and_named_when_searched(search):  # §6.6
    s = search({"bin.dat": b"needle\0", "t.txt": "needle\n"})
    assert s.call("grep", {"pattern": "needle"}).text == "t.txt:1:needle"
    r = s.call("grep", {"pattern": "needle", "path": "bin.dat"})
    assert r.text == "(no matches; bin.dat is a binary file)"


def test_match_cap_and_truncation_line(search):  # §6.7
    s = search({"f.txt": "".join(f"needle {i}\n" for i in range(250))})
    out = lines(s.call("grep", {"pattern": "needle"}))
    assert len(out) == 201
    assert out[0] == "f.txt:1:needle 0" and out[199] == "f.txt:200:needle 199"
    assert out[200] == "... (truncated at 200 matches; narrow the pattern, path or glob)"
    out = lines(s.call("grep", {"pattern": "needle", "max_matches": 5}))
    assert out[:5] == [f"f.txt:{i + 1}:needle {i}" for i in range(5)]
    assert out[5] == "... (truncated at 5 matches; narrow the pattern, path or glob)"
    for bad in (201, 0):
        r = s.call("grep", {"pattern": "needle", "max_matches": bad})
        assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False


def test_results_come_in_path_order(search):  # §6.8
    s = search({"a.txt": "needle\n", "a/b.txt": "needle\n", "B.txt": "needle\n"})
    assert lines(s.call("grep", {"pattern": "needle"})) == [
        "B.txt:1:needle", "a/b.txt:1:needle", "a.txt:1:needle"]


def test_case_sensitivity_is_opt_out(search):  # §6.9
    s = search({"f.txt": "x\nNEEDLE"})
    assert s.call("grep", {"pattern": "needle"}).text == "(no matches)"
    r = s.call("grep", {"pattern": "needle", "case_insensitive": True})
    assert r.text == "f.txt:2:NEEDLE"


def test_context_ranges_merge_and_separate(search):  # §6.11
    s = search({"f.txt": "a\nm1\nb\nc\nd\nm2\ne\n"})
    r = s.call("grep", {"pattern": "^m", "context": 1})
    assert lines(r) == ["f.txt-1-a", "f.txt:2:m1", "f.txt-3-b", "--", "f.txt-5-d",
                        "f.txt:6:m2", "f.txt-7-e"]
    r = s.call("grep", {"pattern": "^m", "context": 2})
    assert lines(r) == ["f.txt-1-a", "f.txt:2:m1", "f.txt-3-b", "f.txt-4-c", "f.txt-5-d",
                        "f.txt:6:m2", "f.txt-7-e"]


def test_context_past_the_cap_prints_matches_as_context(search):  # §6.11 (cap + context)
    s = search({"f.txt": "m1\nm2\nm3\nx\n"})
    r = s.call("grep", {"pattern": "^m", "context": 1, "max_matches": 1})
    assert lines(r) == ["f.txt:1:m1", "f.txt-2-m2",
                        "... (truncated at 1 matches; narrow the pattern, path or glob)"]


def test_context_separates_files_and_is_bounded(search):  # §6.12
    s = search({"a.txt": "x\nneedle\ny\n", "b.txt": "needle\n"})
    r = s.call("grep", {"pattern": "needle", "context": 1})
    assert lines(r) == ["a.txt-1-x", "a.txt:2:needle", "a.txt-3-y", "--", "b.txt:1:needle"]
    r = s.call("grep", {"pattern": "needle", "context": 11})
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False


@pytest.mark.parametrize("pattern", ["(", "(?=x)", r"(a)\1", r"a\nb"])
def test_unsupported_patterns_are_not_executed(search, pattern):  # §6.13
    s = search({"f.txt": "needle\n"})
    r = s.call("grep", {"pattern": pattern})
    assert r.is_error and r.error.kind == "invalid_arguments"
    assert r.meta["executed"] is False
    assert r.meta["violations"] == [{"path": "/pattern", "keyword": "regex"}]
    if pattern != "(":
        assert "does not support" in r.text
    else:
        assert "not a valid Python regular expression" in r.text


@pytest.mark.parametrize("pattern,construct", [
    ("(?<=a)b", "look-behind"), ("(?<!a)b", "negative look-behind"), ("(?!a)b", "look-ahead"),
    ("(?P<x>a)(?P=x)", "backreference"), ("(?>ab)", "atomic group"), ("a++", "possessive"),
    ("a{2}+", "possessive"), ("[[:alpha:]]", "nested set"), ("a[\\n]", "newline"),
])
def test_every_listed_construct_is_named(search, pattern, construct):  # §2 validator
    s = search({"f.txt": "needle\n"})
    r = s.call("grep", {"pattern": pattern})
    assert r.error.kind == "invalid_arguments" and construct in r.text


def test_crlf_and_long_lines_print_clean(search):  # §6.14
    long_line = "needle" + "x" * 594
    s = search({"crlf.txt": b"one needle\r\ntwo\r\n", "long.txt": long_line + "\n"})
    assert s.call("grep", {"pattern": "needle", "path": "crlf.txt"}).text == \
        "crlf.txt:1:one needle"
    r = s.call("grep", {"pattern": "needle", "path": "long.txt"})
    assert r.text == "long.txt:1:" + long_line[:500] + "… (+100 chars)"


def test_symlinks_are_not_followed_and_paths_stay_confined(search):  # §6.15
    s = search({"a.txt": "nothing\n"})
    os.symlink("/etc", s.workspace / "link")
    r = s.call("grep", {"pattern": "root"})
    assert not r.is_error and "link/" not in r.text
    r = s.call("grep", {"pattern": "root", "path": "../"})
    assert r.error.kind == "outside_workspace"
    assert r.error.signature == "FS_OUTSIDE_WORKSPACE"


def test_missing_path_is_not_found(search):  # §1.6
    s = search({"a.txt": "x\n"})
    r = s.call("grep", {"pattern": "x", "path": "nope"})
    assert r.error.kind == "not_found"
    assert r.text == "grep: path not found: nope"


def test_glob_filter_narrows_only(search):  # §6.10
    s = search({".gitignore": "*.log\n", "a.py": "needle\n", "pkg/b.py": "needle\n",
                "c.go": "needle\n", "d.txt": "needle\n", "src/x.ts": "needle\n",
                "src/deep/y.ts": "needle\n", "z.ts": "needle\n", "a.log": "needle\n",
                ".h/e.py": "needle\n"})
    assert lines(s.call("grep", {"pattern": "needle", "glob": "*.py"})) == [
        "a.py:1:needle", "pkg/b.py:1:needle"]
    assert lines(s.call("grep", {"pattern": "needle", "glob": "src/**/*.ts"})) == [
        "src/deep/y.ts:1:needle", "src/x.ts:1:needle"]
    assert lines(s.call("grep", {"pattern": "needle", "glob": "*.{py,go}"})) == [
        "a.py:1:needle", "c.go:1:needle", "pkg/b.py:1:needle"]
    assert s.call("grep", {"pattern": "needle", "glob": "*.log"}).text == "(no matches)"
    r = s.call("grep", {"pattern": "needle", "glob": "{a,b"})
    assert r.error.kind == "invalid_arguments" and "/glob" in r.text


def test_rg_dialect_rejections_name_the_cause(callgate_session):  # §2 (rg engine)
    s = callgate_session(plugins=[callgate_search], files={"f.txt": "a\n"},
                         config={"search": {"grep_engine": "rg"}})
    r = s.call("grep", {"pattern": r"a\Z"})
    assert r.is_error and r.error.signature == "SEARCH_INVALID_PATTERN"
    assert r.text.startswith("grep: invalid pattern: regex parse error: ")


def test_missing_rg_fails_boot_for_rg_and_falls_back_for_auto(monkeypatch, tmp_path,
                                                             callgate_session):  # §6.16
    (tmp_path / "bin").mkdir()
    monkeypatch.setattr("sys.executable", str(tmp_path / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(Exception) as info:
        Host.boot({"search": {"grep_engine": "rg"}}, plugins=[callgate_search],
                  entrypoints=False)
    assert "search.grep_engine" in str(info.value) and "ripgrep" in str(info.value)
    # no rg beside the interpreter wherever the session's tools run: sys.executable is set
    # there too by a fault plugin module (tests/faults.py), as here by monkeypatch
    s = callgate_session(plugins=[callgate_search, faults], files={"f.txt": "needle\n"},
                         config={"search": {"grep_engine": "auto"},
                                 "test_faults": {"sys_executable": sys.executable}})
    r = s.call("grep", {"pattern": "needle"})
    assert r.text == "f.txt:1:needle" and r.meta["engine"] == "python"


def test_auto_prefers_rg_when_installed(callgate_session):  # §2 engines
    s = callgate_session(plugins=[callgate_search], files={"f.txt": "needle\n"})
    assert s.call("grep", {"pattern": "needle"}).meta["engine"] == "rg"


def test_grep_is_hidden_and_read_only():  # integration: off the boot surface
    host = Host.boot({}, plugins=[callgate_search], entrypoints=False, surface="full")
    for name in ("grep", "glob", "ls"):
        spec = host.registry.get(name)
        assert spec.visibility == "hidden" and spec.contract_read_only
        assert spec.schema["additionalProperties"] is False
    assert host.registry.get("grep").permission_subject.kind == "pattern"
    assert host.registry.get("ls").permission_subject.arguments == ("path",)


def test_lean_sessions_reach_search_through_use_capability(callgate_session):  # §intro
    import callgate_capability

    s = callgate_session(plugins=[callgate_capability, callgate_search], surface="lean",
                         files={"a.go": "func Foo() {}\n"})
    assert "grep" not in s.session.tool_names()
    r = s.call("use_capability", {"action": "call", "capability_id": "tool:grep",
                                  "arguments": {"pattern": "func "}})
    assert r.text == "a.go:1:func Foo() {}"
    assert s.call("grep", {"pattern": "func "}).error.kind == "unavailable"
