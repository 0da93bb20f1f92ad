"""glob through the full pipeline (search.md §6, statements 17-20)."""

from __future__ import annotations

import os

import pytest

from .helpers import lines

TREE = {"a.go": "", "sub/b.go": "", "sub/deep/c.go": "", "x.txt": ""}


def test_name_patterns_match_at_any_depth_and_path_patterns_whole_paths(plain):  # §6.17
    s = plain(TREE)
    for pattern in ("**/*.go", "*.go"):
        assert s.call("glob", {"pattern": pattern}).text == "a.go\nsub/b.go\nsub/deep/c.go"
    assert s.call("glob", {"pattern": "sub/*.go"}).text == "sub/b.go"
    assert s.call("glob", {"pattern": "**/*.{go,txt}"}).text == \
        "a.go\nsub/b.go\nsub/deep/c.go\nx.txt"
    assert s.call("glob", {"pattern": "*.py"}).text == "(no matches)"


def test_vcs_and_vendor_dirs_are_pruned_unless_named(plain):  # §6.18
    s = plain({".git/config": "", ".git/objects/ab": "", "node_modules/m.js": "",
               ".github/workflows/ci.yml": "", "src/a.js": ""})
    out = lines(s.call("glob", {"pattern": "**/*"}))
    assert out == [".github/workflows/ci.yml", "src/a.js"]
    assert s.call("glob", {"pattern": "node_modules/**/*.js"}).text == "node_modules/m.js"
    assert s.call("glob", {"pattern": "**/*.yml"}).text == ".github/workflows/ci.yml"
    assert s.call("glob", {"pattern": "*.js", "path": "node_modules"}).text == \
        "node_modules/m.js"


def test_gitignored_and_hidden_files_are_listed(plain):  # §3 matching
    s = plain({".gitignore": "*.log\n", "a.log": "", ".env": ""})
    assert lines(s.call("glob", {"pattern": "*"})) == [".env", ".gitignore", "a.log"]


def test_files_only_case_sensitive_and_capped(plain):  # §6.19
    s = plain({"sub/a.go": "", "sub/deep/c.go": ""})
    assert s.call("glob", {"pattern": "sub/*"}).text == "sub/a.go"
    assert s.call("glob", {"pattern": "*.GO"}).text == "(no matches)"
    many = plain({f"f{i:04d}.txt": "" for i in range(1200)})
    out = lines(many.call("glob", {"pattern": "*.txt"}))
    assert len(out) == 1001
    assert out[0] == "f0000.txt" and out[999] == "f0999.txt"
    assert out[1000] == "... (truncated at 1000 files; narrow the pattern)"


def test_symlinks_are_neither_listed_nor_followed(plain):  # §1.4
    s = plain({"t/a.go": ""})
    os.symlink("t", s.workspace / "ln")
    os.symlink("t/a.go", s.workspace / "f.go")
    assert s.call("glob", {"pattern": "**/*.go"}).text == "t/a.go"


@pytest.mark.parametrize("pattern", ["{a,b", "[ab", "../*"])
def test_malformed_patterns_are_not_executed(plain, pattern):  # §6.20
    s = plain(TREE)
    r = s.call("glob", {"pattern": pattern})
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
    assert r.meta["violations"] == [{"path": "/pattern", "keyword": "glob"}]


def test_base_path_errors(plain):  # §6.20, §1.6
    s = plain(TREE)
    r = s.call("glob", {"pattern": "*", "path": "x.txt"})
    assert r.is_error and r.text.startswith("glob: not a directory: x.txt")
    r = s.call("glob", {"pattern": "*", "path": "missing"})
    assert r.error.kind == "not_found" and r.text == "glob: path not found: missing"
    r = s.call("glob", {"pattern": "*", "path": "../"})
    assert r.error.kind == "outside_workspace"


def test_base_path_and_absolute_patterns(plain):  # §3 syntax
    s = plain(TREE)
    assert s.call("glob", {"pattern": "*.go", "path": "sub"}).text == "sub/b.go\nsub/deep/c.go"
    absolute = f"{s.workspace.resolve()}/sub/*.go"
    assert s.call("glob", {"pattern": absolute}).text == "sub/b.go"
    r = s.call("glob", {"pattern": "/etc/*.conf"})
    assert r.error.kind == "outside_workspace"


def test_syntax_classes_escapes_and_double_star(plain):  # §3 syntax
    s = plain({"a1.txt": "", "b2.txt": "", "c3.txt": "", "x/y/z.md": "", "x/z.md": "",
               "q?.txt": "", ".hidden.txt": ""})
    assert lines(s.call("glob", {"pattern": "[ab]*.txt"})) == ["a1.txt", "b2.txt"]
    assert lines(s.call("glob", {"pattern": "[!ab]?.txt"})) == ["c3.txt", "q?.txt"]
    assert s.call("glob", {"pattern": "q\\?.txt"}).text == "q?.txt"
    assert lines(s.call("glob", {"pattern": "x/**/z.md"})) == ["x/y/z.md", "x/z.md"]
    assert lines(s.call("glob", {"pattern": "x/**"})) == ["x/y/z.md", "x/z.md"]
    assert s.call("glob", {"pattern": "*hidden*"}).text == ".hidden.txt"
    assert lines(s.call("glob", {"pattern": "{x/y,x}/*.md"})) == ["x/y/z.md", "x/z.md"]
    assert lines(s.call("glob", {"pattern": "./*.txt"})) == [
        ".hidden.txt", "a1.txt", "b2.txt", "c3.txt", "q?.txt"]
