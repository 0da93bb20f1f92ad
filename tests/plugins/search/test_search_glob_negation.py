"""A glob that starts with ``!`` (issue 36, item 16).

It used to answer ``(no matches)`` in silence, from both tools: ``!`` was read as a
literal first character. Now grep's ``glob`` reads it as ripgrep's ``--glob`` does (the
flag Claude Code's and Codex's grep tools pass their glob to): the files it matches are
left out; and the ``glob`` tool, which lists the files a pattern matches, refuses it
with a structured error before reading anything. ``\\!`` still means a literal ``!``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TREE = {
    "app.js": "needle\n",
    "app.min.js": "needle\n",
    "lib/util.min.js": "needle\n",
    "lib/util.ts": "needle\n",
    "src/deep/a.py": "needle\n",
    "notes.txt": "needle\n",
    "!bang.txt": "needle\n",
    ".hidden.js": "needle\n",
    "skip.log": "needle\n",
    ".gitignore": "*.log\n",
}


def _found(result) -> set[str]:
    assert not result.is_error, result.text
    if result.text.startswith("(no matches"):
        return set()
    return {line.split(":", 1)[0] for line in result.text.splitlines()}


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            out[os.path.relpath(path, root)] = Path(path).read_bytes()
    return out


@pytest.mark.parametrize(("glob", "expected"), [
    ("!*.min.js", {"app.js", "lib/util.ts", "src/deep/a.py", "notes.txt", "!bang.txt"}),
    ("!*.{js,ts}", {"src/deep/a.py", "notes.txt", "!bang.txt"}),
    ("!src/**", {"app.js", "app.min.js", "lib/util.min.js", "lib/util.ts", "notes.txt",
                 "!bang.txt"}),
    ("*.min.js", {"app.min.js", "lib/util.min.js"}),
    ("\\!bang.txt", {"!bang.txt"}),
])
def test_grep_glob_with_a_leading_bang_leaves_those_files_out(search, glob, expected):
    s = search(TREE)
    assert _found(s.call("grep", pattern="needle", glob=glob)) == expected


def test_grep_negated_glob_only_narrows(search):
    """Hidden and ignored files stay out: a "!" glob never brings anything back."""
    s = search(TREE)
    found = _found(s.call("grep", pattern="needle", glob="!*.txt"))
    assert ".hidden.js" not in found and "skip.log" not in found
    assert found == {"app.js", "app.min.js", "lib/util.min.js", "lib/util.ts", "src/deep/a.py"}


def test_grep_negated_glob_on_a_named_file(search):
    s = search(TREE)
    assert _found(s.call("grep", pattern="needle", path="notes.txt", glob="!*.txt")) == set()
    assert _found(s.call("grep", pattern="needle", path="notes.txt",
                         glob="!*.js")) == {"notes.txt"}


@pytest.mark.parametrize(("glob", "says"), [
    ("!", "a '!' alone excludes nothing"),
    ("!!*.js", "one leading '!' excludes"),
    ("![ab", "unbalanced '['"),
])
def test_grep_refuses_a_bang_glob_it_cannot_use(search, glob, says):
    s = search(TREE)
    before = _tree(s.workspace)
    r = s.call("grep", pattern="needle", glob=glob)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
    assert r.meta["violations"] == [{"path": "/glob", "keyword": "glob"}]
    assert says in r.text
    assert _tree(s.workspace) == before


def test_the_glob_tool_refuses_a_leading_bang_with_the_way_out(plain):
    s = plain(TREE)
    before = _tree(s.workspace)
    r = s.call("glob", {"pattern": "!*.min.js"})
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
    assert r.meta["violations"] == [{"path": "/pattern", "keyword": "glob"}]
    assert "a leading '!' would exclude files, and glob lists the files a pattern matches" \
        in r.text
    assert "grep's glob takes !pattern" in r.text
    assert r.error.signature.startswith("argument_validation:glob:")
    assert _tree(s.workspace) == before


def test_the_glob_tool_finds_a_name_with_an_escaped_bang(plain):
    s = plain(TREE)
    assert s.call("glob", {"pattern": "\\!bang.txt"}).text == "!bang.txt"
    assert s.call("glob", {"pattern": "*bang*"}).text == "!bang.txt"
