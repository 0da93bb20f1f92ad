"""ripgrep's ignore cases on both grep engines, from every searched path (issue 36, item 15).

The cases are adapted from ripgrep's own regression tests (``tests/regression.rs``: the
issue number is in each id) and from the pattern matrix of its ``ignore`` crate
(``crates/ignore/tests/gitignore_matched_path_or_any_parents_tests``), written afresh
for callgate's grep: ``.gitignore`` files only (callgate reads no ``.ignore``), a file
tree where every file holds ``needle``, and for each case the files grep finds from
the root and from the subdirectories named. The answers are ripgrep's:
`test_the_expected_answers_are_ripgreps` runs the ``rg`` binary itself (reading the
``.gitignore`` files above the folder it searches, as ripgrep does) and checks every
expected set against it, so the engines are held to ripgrep's answer, not to ours.

One rule for hidden names in both engines: a hidden name is left out while walking
unless a ``.gitignore`` ``!`` rule re-includes that very entry, whatever folder is
searched (it was re-included by the rg engine only when the rule was in a folder rg
read, and never by the Python engine). The ``glob`` argument only narrows: it never
re-includes a hidden file (rg's ``--type`` filter would).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

import attrs
import callgate_code
import pytest
from callgate_search._engine_rg import command
from callgate_search._grep_model import GrepRequest
from callgate_search._rg import find_rg
from callgate_toolkit.walk import IgnoreRules


@attrs.frozen
class Case:
    id: str
    files: dict[str, str]
    """Paths to create: ``.gitignore`` files with their rules, every other file ``needle``."""
    found: dict[str, set[str]]
    """Searched path (``""``: the workspace) → the files grep finds there."""
    ripgrep: bool = True
    """Whether ripgrep itself gives this answer (the oracle checks it)."""
    named: frozenset[str] = frozenset()
    """Searched paths a walk from the root never reaches (ignored or hidden): searched
    anyway, as a path of their own."""


def _tree(gitignores: dict[str, str], *files: str) -> dict[str, str]:
    return {**gitignores, **{name: "needle\n" for name in files}}


CASES = [
    Case("r16-dir-rule-at-any-depth", _tree({".gitignore": "ghi/\n"},
         "ghi/top.txt", "def/ghi/sub.txt", "keep.txt"),
         {"": {"keep.txt"}, "def": set()}),
    Case("r25-anchored-dir", _tree({".gitignore": "/llvm/\n"}, "src/llvm/foo", "llvm/bar"),
         {"": {"src/llvm/foo"}, "src": {"src/llvm/foo"}}),
    Case("r30-reinclude-inside-double-star", _tree({".gitignore": "vendor/**\n!vendor/manifest\n"},
         "vendor/manifest", "vendor/other"),
         {"": {"vendor/manifest"}, "vendor": {"vendor/manifest"}}),
    Case("r49-middle-slash-anchors", _tree({".gitignore": "foo/bar\n"},
         "test/foo/bar/baz", "foo/bar/baz", "foo/keep"),
         {"": {"test/foo/bar/baz", "foo/keep"}, "test": {"test/foo/bar/baz"},
          "foo": {"foo/keep"}}),
    Case("r50-trailing-slash-with-middle-slash", _tree({".gitignore": "XXX/YYY/\n"},
         "abc/def/XXX/YYY/bar", "ghi/XXX/YYY/bar", "XXX/YYY/bar"),
         {"": {"abc/def/XXX/YYY/bar", "ghi/XXX/YYY/bar"}}),
    Case("r65-dir-rule-spares-a-file-of-that-name", _tree({".gitignore": "a/\n"},
         "a/foo", "a/bar", "b/a"),
         {"": {"b/a"}, "b": {"b/a"}}),
    Case("r67-everything-but-one-dir", _tree({".gitignore": "/*\n!/dir\n"},
         "foo/bar", "dir/bar", "top.txt"),
         # a folder named in path is walked even if ignored: foo/bar is not itself matched
         {"": {"dir/bar"}, "dir": {"dir/bar"}, "foo": {"foo/bar"}}, named=frozenset({"foo"})),
    Case("r87-double-star-inside-a-name", _tree({".gitignore": "foo\n**no-vcs**\n"},
         "foo", "bar", "a-no-vcs-b"),
         {"": {"bar"}}),
    Case("r90-hidden-file-reincluded", _tree({".gitignore": "!.foo\n"}, ".foo", ".bar", "x"),
         {"": {".foo", "x"}}),
    Case("r127-path-rule", _tree({".gitignore": "foo/sherlock\n"}, "foo/sherlock", "foo/watson"),
         {"": {"foo/watson"}, "foo": {"foo/watson"}}),
    Case("r131-non-ascii-name", _tree({".gitignore": "TopÑapa\n"}, "TopÑapa", "other"),
         {"": {"other"}}),
    Case("r184-dot-star-from-below", _tree({".gitignore": ".*\n"}, "foo/bar/baz", ".hidden"),
         {"": {"foo/bar/baz"}, "foo/bar": {"foo/bar/baz"}}),
    Case("r807-hidden-dir-reincluded-then-part-ignored",
         _tree({".gitignore": "!.a/\n.a/b\n"}, ".a/b/file", ".a/c/file"),
         {"": {".a/c/file"}, ".a": {".a/c/file"}}),
    Case("r829-anchored-path", _tree({".gitignore": "/a/b\n"}, "a/b/test.txt", "a/c.txt"),
         {"": {"a/c.txt"}, "a": {"a/c.txt"}}),
    Case("r829-2731-reinclude-one-build-dir",
         _tree({".gitignore": "build/\n!/some_dir/build/\n"},
               "some_dir/build/foo", "other/build/foo"),
         {"": {"some_dir/build/foo"}, "some_dir": {"some_dir/build/foo"},
          "some_dir/build": {"some_dir/build/foo"}, "other": set()}),
    Case("r829-2747-star-in-the-middle", _tree({".gitignore": "/a/*/b\n"},
         "a/c/b/foo", "a/src/f/b/foo"),
         {"": {"a/src/f/b/foo"}, "a/src": {"a/src/f/b/foo"}, "a/c": set()}),
    Case("r829-2778-star-stays-in-one-dir", _tree({".gitignore": "/parent/*.txt\n"},
         "parent/ignore-me.txt", "parent/subdir/dont-ignore-me.txt"),
         {"": {"parent/subdir/dont-ignore-me.txt"},
          "parent": {"parent/subdir/dont-ignore-me.txt"}}),
    Case("r829-2836-deep-anchored-dir", _tree({".gitignore": "/testdir/sub/sub2/\n"},
         "testdir/sub/sub2/foo", "testdir/sub/x"),
         {"": {"testdir/sub/x"}, "testdir": {"testdir/sub/x"},
          "testdir/sub": {"testdir/sub/x"}}),
    Case("r1098-double-star-within-a-name", _tree({".gitignore": "a**b\n"}, "afoob", "other"),
         {"": {"other"}}),
    Case("f1757-rules-about-a-searched-dir",
         _tree({".gitignore": "rust/target\nrust1/target/onemore\n"},
               "rust/source.rs", "rust/target/out.html", "rust1/source.rs",
               "rust1/target/onemore/out.html", "rust1/target/kept.html"),
         {"": {"rust/source.rs", "rust1/source.rs", "rust1/target/kept.html"},
          "rust": {"rust/source.rs"},
          "rust1": {"rust1/source.rs", "rust1/target/kept.html"}}),
    Case("r2711-nested-rule-above-the-searched-dir", _tree({"a/.gitignore": "foo\n"},
         "a/b/foo", "a/b/bar"),
         {"": {"a/b/bar"}, "a": {"a/b/bar"}, "a/b": {"a/b/bar"}}),
    Case("r3173-hidden-reincluded-from-any-path", _tree({".gitignore": "!.foo.txt\n"},
         "subdir/.foo.txt", "subdir/.bar.txt"),
         {"": {"subdir/.foo.txt"}, "subdir": {"subdir/.foo.txt"}}),
    Case("ignore-git-parent", _tree({".gitignore": "sherlock\n"}, "foo/sherlock", "foo/watson"),
         {"foo": {"foo/watson"}}),
    Case("hidden-dir-reincluded-its-hidden-children-not",
         _tree({".gitignore": "!.github/\n"}, ".github/workflows/ci.yml", ".github/.secret",
               ".cache/x"),
         {"": {".github/workflows/ci.yml"}, ".github": {".github/workflows/ci.yml"},
          ".github/workflows": {".github/workflows/ci.yml"}}),
    Case("a-rule-inside-a-hidden-dir-does-not-open-it",
         _tree({".gitignore": "!.hd/x.txt\n"}, ".hd/x.txt", "y.txt"),
         {"": {"y.txt"}, ".hd": {".hd/x.txt"}}, named=frozenset({".hd"})),
    Case("a-deeper-rule-wins-over-a-reinclude",
         _tree({".gitignore": "!.env.example\n", "sub/.gitignore": ".env.example\n"},
               ".env.example", "sub/.env.example", "sub/kept"),
         {"": {".env.example", "sub/kept"}, "sub": {"sub/kept"}}),
    Case("a-deeper-reinclude-wins-over-an-ignore",
         _tree({".gitignore": "*.log\n", "sub/.gitignore": "!.keep.log\n"},
               "a.log", "sub/.keep.log", "sub/b.log", ".keep.log"),
         {"": {"sub/.keep.log"}, "sub": {"sub/.keep.log"}}),
    Case("a-nested-reinclude-of-a-hidden-name-searched-from-its-dir",
         _tree({"a/.gitignore": "!.rc\n"}, "a/b/.rc", "a/.rc", ".rc"),
         {"": {"a/.rc", "a/b/.rc"}, "a": {"a/.rc", "a/b/.rc"}, "a/b": {"a/b/.rc"}}),
    # not ripgrep's answer: ripgrep enters .git and .venv once "!.*" re-includes them,
    # callgate never walks into a pruned folder it was not pointed at
    Case("dot-star-reincluded-pruned-folders-stay-out",
         _tree({".gitignore": "!.*\n"}, ".git/config", ".venv/lib.py", ".x", ".d/y"),
         {"": {".d/y", ".x"}, ".git": {".git/config"}}, ripgrep=False),
]


# --- the pattern matrix of ripgrep's ignore crate (written afresh) --------------------------

PREFIXES = {"plain": "", "rooted": "/", "star": "*/", "globstar": "**/"}
SUFFIXES = {"": "", "dir": "/", "children": "/*", "all": "/**"}


def _matrix() -> Case:
    """Every prefix × suffix over a name at the root and one a level down, each as a file
    and as a directory holding a file and a child directory with a file."""
    rules, files = [], []
    for p_name, prefix in PREFIXES.items():
        for s_name, suffix in SUFFIXES.items():
            for where in ("root", "deep"):
                stem = f"{p_name}_{s_name or 'name'}_{where}"
                base = "" if where == "root" else "parent/"
                rules.append(f"{prefix}file_{stem}{suffix}")
                rules.append(f"{prefix}dir_{stem}{suffix}")
                files.append(f"{base}file_{stem}")
                files += [f"{base}dir_{stem}/file", f"{base}dir_{stem}/child/file"]
    files.append("parent/kept")
    return Case("ignore-crate-pattern-matrix", _tree({".gitignore": "\n".join(rules) + "\n"},
                                                     *files), {"": set(), "parent": set()})


MATRIX = _matrix()


def _found(result: Any) -> set[str]:
    assert not result.is_error, result.text
    if result.text.startswith("(no matches"):
        return set()
    return {line.split(":", 1)[0] for line in result.text.splitlines() if ":" in line}


def _ripgrep(rg: str, root: Path, path: str, *, named: bool = False) -> set[str]:
    """What ripgrep itself finds in ``root/path``, with every ignore source but
    ``.gitignore`` files switched off.

    ripgrep's answer does not depend on the folder searched (its regression tests for
    issues 829 and 3173 pin that), but the rg of the PyPI package, 14.1.0, misapplies a
    parent's rooted rules when it searches a subfolder (issue 829, fixed after it): so the
    answer for a subfolder is ripgrep's answer for the workspace, below that folder. A
    ``named`` folder, one that walk never reaches (ignored, or hidden), is searched as a
    path of its own, with no parent's rules (its case holds none that could match below).
    """
    args = [rg, "--files-with-matches", "--no-config", "--no-ignore-global", "--no-ignore-dot",
            "--no-ignore-exclude", "--no-require-git", "needle", "--",
            path if named else "."]
    if named:
        args.insert(1, "--no-ignore-parent")
    proc = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=60,
                          check=False)
    # 2 with nothing printed: "No files were searched" (every file was ignored)
    assert proc.returncode in (0, 1) or (proc.returncode == 2 and not proc.stdout), proc.stderr
    found = {line.removeprefix("./") for line in proc.stdout.splitlines()}
    return found if named or not path else {f for f in found if f.startswith(path + "/")}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def rg() -> str:
    found = find_rg()
    if found is None:
        pytest.skip("no rg binary (the PyPI ripgrep package)")
    return found


def _no_gitignore_above(path: Path) -> None:
    for parent in path.parents:
        if (parent / ".gitignore").exists():
            pytest.skip(f"{parent}/.gitignore would be read by ripgrep itself")


@pytest.mark.parametrize("case", [c for c in CASES if c.ripgrep], ids=lambda c: c.id)
def test_the_expected_answers_are_ripgreps(case: Case, rg: str, tmp_path: Path) -> None:
    _no_gitignore_above(tmp_path)
    _write(tmp_path, case.files)
    for path, expected in case.found.items():
        found = _ripgrep(rg, tmp_path, path, named=path in case.named)
        assert found == expected, f"ripgrep in {path or '.'}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_both_engines_give_ripgreps_answer_from_every_path(case: Case, search) -> None:
    s = search(case.files)
    for path, expected in case.found.items():
        found = _found(s.call("grep", pattern="needle", path=path or "."))
        assert found == expected, f"grep from {path or '.'}"


def test_the_pattern_matrix_gives_ripgreps_answer_on_both_engines(search, rg: str,
                                                                  tmp_path: Path) -> None:
    oracle_root = tmp_path / "oracle"
    oracle_root.mkdir()
    _no_gitignore_above(oracle_root)
    _write(oracle_root, MATRIX.files)
    s = search(MATRIX.files)
    for path in MATRIX.found:
        expected = _ripgrep(rg, oracle_root, path)
        assert expected, "the matrix ignores nothing? (the comparison would be vacuous)"
        assert "parent/kept" in expected or path == ""
        found = _found(s.call("grep", pattern="needle", path=path or "."))
        assert found == expected, f"grep from {path or '.'}: {sorted(found ^ expected)}"


def test_glob_never_reincludes_a_hidden_file(search) -> None:
    s = search(_tree({}, ".h.py", "a.py", "sub/.h2.py"))
    assert _found(s.call("grep", pattern="needle", glob="*.py")) == {"a.py"}
    s = search(_tree({".gitignore": "!.h.py\n"}, ".h.py", "a.py", "sub/.h2.py"))
    assert _found(s.call("grep", pattern="needle", glob="*.py")) == {".h.py", "a.py"}
    assert _found(s.call("grep", pattern="needle", glob="sub/*.py")) == set()


def test_a_named_hidden_path_is_searched_anyway(search) -> None:
    s = search(_tree({}, ".hidden/a.txt", ".env.local"))
    assert _found(s.call("grep", pattern="needle", path=".hidden")) == {".hidden/a.txt"}
    assert _found(s.call("grep", pattern="needle", path=".env.local")) == {".env.local"}
    assert _found(s.call("grep", pattern="needle")) == set()


def test_code_index_walks_by_the_same_rule(callgate_session) -> None:
    files = {".gitignore": "!.tools/\n", ".tools/gen.py": "def gen():\n    pass\n",
             ".other/skip.py": "def skip():\n    pass\n", "app.py": "def app():\n    pass\n"}
    s = callgate_session(plugins=[callgate_code], files=files)
    text = s.call("code_index", action="outline", path=".").text
    assert ".tools/gen.py" in text and "app.py" in text, text
    assert ".other" not in text, text


def test_rg_is_asked_to_list_hidden_names_only_when_a_rule_above_may_reinclude_one(
        tmp_path: Path) -> None:
    """``--hidden`` (rg then walks hidden folders such as .cache, for the rule to judge)
    only when a "!" rule sits above the searched folder, where rg does not read."""
    _write(tmp_path, _tree({".gitignore": "!.keep\n", "a/.gitignore": "x\n"}, "a/b/.keep", "c"))

    def argv(target: str) -> list[str]:
        req = GrepRequest(root=str(tmp_path), target_rel=target, is_file=False,
                          pattern="needle", ignore_case=False, context=0, glob=None, limit=10,
                          deadline=0.0, cancelled=threading.Event(),
                          rules=IgnoreRules(str(tmp_path)))
        return command("rg", req)

    assert "--hidden" not in argv("")
    assert "--hidden" in argv("a")
    assert "--hidden" in argv("a/b")
