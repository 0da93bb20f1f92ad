"""search.md §6.1: the rg and Python engines print byte-identical results on the corpus."""

from __future__ import annotations

from pathlib import Path

import callgate_search
import pytest

from .corpus import build

# Every argument is covered: pattern, path, glob, case_insensitive, context, max_matches.
CALLS: list[dict[str, object]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "path": "sub"},
    {"pattern": "needle", "path": "sub/deep"},
    {"pattern": "needle", "path": "build"},
    {"pattern": "needle", "path": "node_modules"},
    {"pattern": "needle", "path": ".hidden"},
    {"pattern": "needle", "path": ".env"},
    {"pattern": "needle", "path": "a.log"},
    {"pattern": "needle", "path": "bin.dat"},
    {"pattern": "needle", "path": "crlf.txt"},
    {"pattern": "needle$", "path": "crlf.txt"},
    {"pattern": "needle", "glob": "*.txt"},
    {"pattern": "needle", "glob": "src/**/*.ts"},
    {"pattern": "needle", "glob": "*.{py,go}"},
    {"pattern": "needle", "path": "src", "glob": "*.ts"},
    {"pattern": "NEEDLE", "case_insensitive": True},
    {"pattern": "needle", "context": 1},
    {"pattern": "needle", "context": 3, "max_matches": 5},
    {"pattern": "needle", "max_matches": 1},
    {"pattern": r"^needle \d+$"},
    {"pattern": r"^needle \d+$", "context": 2, "max_matches": 7},
    {"pattern": r"\bneedle\b", "case_insensitive": True, "context": 2, "glob": "*.txt"},
    {"pattern": r"Σ\w+"},
    {"pattern": "ïve|日本"},
    {"pattern": "x{200}"},
    {"pattern": r"\Aneedle"},
    {"pattern": "^needle after"},
    {"pattern": "utf-16"},
    {"pattern": "latin-1"},
    {"pattern": "without newline$"},
    {"pattern": "^$", "path": "src/app.py"},
    {"pattern": "zzz_nothing_here"},
    {"pattern": r"def \w+\(", "context": 1},
    {"pattern": "needle", "path": "sub/keep.log", "context": 10},
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("corpus"))


def _run_all(callgate_session, corpus: Path, engine: str) -> list[str]:
    s = callgate_session(plugins=[callgate_search], workspace=corpus,
                         config={"search": {"grep_engine": engine}})
    out = []
    for args in CALLS:
        result = s.call("grep", args)
        assert not result.is_error, (args, result.text)
        assert result.meta["engine"] == engine
        out.append(result.text)
    return out


def test_engines_print_identical_bytes_on_the_corpus(callgate_session, corpus):
    rg = _run_all(callgate_session, corpus, "rg")
    python = _run_all(callgate_session, corpus, "python")
    for args, a, b in zip(CALLS, rg, python, strict=True):
        assert a.encode() == b.encode(), f"engines differ for {args}:\nrg:\n{a}\npython:\n{b}"
    # the comparison is not vacuous: most calls find something, and the corpus's traps show
    assert sum(1 for text in rg if text != "(no matches)") >= 28
    first = rg[0].split("\n")
    assert first[:3] == ["B.txt:1:needle in capital B", "a/b.txt:2:needle nested",
                         "a.txt:1:needle one"]
    for hidden_or_ignored in (".env", ".hidden/", "a.log", "build/", "secret.txt:",
                              "ignored_dir/", "sub/b.log", "sub/x.tmp", "node_modules/",
                              "__pycache__", "bin.dat", "link"):
        assert not any(line.startswith(hidden_or_ignored) for line in first), hidden_or_ignored
    for shown in ("deeper/secret.txt:1:", "sub/keep.log:1:", "sub/deep/y.tmp:1:",
                  "utf16.txt:1:needle in utf-16", "bom.txt:1:needle after a BOM",
                  "latin1.txt:1:caf\ufffd needle latin-1", "crlf.txt:1:first needle"):
        assert any(line.startswith(shown) for line in first), shown
    assert first[-1] == "... (truncated at 200 matches; narrow the pattern, path or glob)"
    assert rg[8] == "(no matches; bin.dat is a binary file)"
    # rg runs without --crlf (search.md §2's flags): "$" does not match before "\r\n"
    assert rg[9] == "crlf.txt:1:first needle\ncrlf.txt:3:third needle\ncrlf.txt:4:needle"
    assert rg[10] == "(no matches)"
