"""Edits keep every byte they did not change, line endings included (issue 36, item 14).

A file with mixed endings (CRLF and LF lines) edited by a fuzzy match used to come back
with its untouched LF lines turned into CRLF, while the diff showed them as unchanged.
Each case here checks the bytes written and that the diff agrees with them: the lines
it shows as removed and added are exactly the lines whose bytes changed.
"""

from __future__ import annotations

import difflib

import pytest

from .conftest import err


def _session(fs, files):
    s = fs(files)
    for name in files:
        assert not s.call("read_file", path=name).is_error
    return s


def _changed_lines(before: bytes, after: bytes) -> tuple[list[bytes], list[bytes]]:
    """The lines (with their endings) a byte-level line diff removes and adds."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b,
                                                       autojunk=False).get_opcodes():
        if tag != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return removed, added


def _diff_lines(result_text: str) -> tuple[list[str], list[str]]:
    """The ``-`` and ``+`` lines of the diff in a tool's result."""
    lines = result_text.splitlines()
    body = lines[lines.index(next(x for x in lines if x.startswith("@@"))):]
    return ([x[1:] for x in body if x.startswith("-")],
            [x[1:] for x in body if x.startswith("+")])


def _text(line: bytes) -> str:
    return line.decode().rstrip("\r\n")


def _agrees(before: bytes, after: bytes, result_text: str) -> None:
    removed, added = _changed_lines(before, after)
    shown_removed, shown_added = _diff_lines(result_text)
    assert shown_removed == [_text(x) for x in removed], result_text
    assert shown_added == [_text(x) for x in added], result_text


MIXED = b"one\r\ntwo\nthree  \nfour\nfive\r\n"

CASES = [
    # fuzzy (trailing whitespace), one changed line among LF lines of a mixed file
    pytest.param(MIXED, "two\nthree\nfour", "two\nTHREE\nfour",
                 b"one\r\ntwo\nTHREE\nfour\nfive\r\n", id="fuzzy-lf-lines-stay-lf"),
    # the kept line keeps its trailing whitespace; the changed one gets the file's ending
    pytest.param(b"a\r\nb   \r\nc\nd\n", "b\nc", "b\nC",
                 b"a\r\nb   \r\nC\nd\n", id="fuzzy-kept-line-keeps-its-bytes"),
    # inserted lines end like the matched line before them
    pytest.param(b"a\r\nb  \nc\r\n", "b\nc", "b\nx\ny\nc",
                 b"a\r\nb  \nx\ny\nc\r\n", id="fuzzy-inserted-lines"),
    # a replaced line ends like the line it replaces
    pytest.param(b"head\nx = 1  \r\ny = 2\nend\n", "x = 1\ny = 2", "x = 10\ny = 20",
                 b"head\nx = 10\r\ny = 20\nend\n", id="fuzzy-replaced-lines"),
    # exact match inside one CRLF line: the new line is CRLF and the old one keeps its CRLF
    pytest.param(b"a\r\nb\r\n", "a", "a\nx", b"a\r\nx\r\nb\r\n", id="exact-in-crlf-line"),
    # exact match inside one LF line of a mixed file: LF
    pytest.param(b"a\r\nb\nc\r\n", "b", "b\nx", b"a\r\nb\nx\nc\r\n", id="exact-in-lf-line"),
    # tabs adapted (mode b) on a kept line: the line stays byte for byte
    pytest.param(b"all:\r\n\techo hi\n\techo bye\r\n", "all:\n    echo hi\n    echo bye",
                 "all:\n    echo hi\n    echo ciao",
                 b"all:\r\n\techo hi\n\techo ciao\r\n", id="fuzzy-tabs-kept-line"),
]


@pytest.mark.parametrize(("data", "old", "new", "expected"), CASES)
def test_edit_file_leaves_untouched_bytes_untouched(fs, data, old, new, expected):
    s = _session(fs, {"a.txt": data})
    r = s.call("edit_file", path="a.txt", old_string=old, new_string=new)
    assert not r.is_error, r.text
    assert s.read("a.txt") == expected
    _agrees(data, expected, r.text)


def test_multi_edit_on_a_mixed_file_changes_only_what_it_edits(fs):
    s = _session(fs, {"a.txt": MIXED})
    r = s.call("multi_edit", path="a.txt", edits=[
        {"old_string": "two\nthree", "new_string": "TWO\nthree"},  # exact
        {"old_string": "three\nfour", "new_string": "three\nFOUR"}])  # fuzzy
    assert not r.is_error, r.text
    assert s.read("a.txt") == b"one\r\nTWO\nthree  \nFOUR\nfive\r\n"


def test_a_crlf_file_still_gets_crlf_everywhere(fs):
    s = _session(fs, {"a.txt": b"a  \r\nb\r\nc\r\n"})
    r = s.call("edit_file", path="a.txt", old_string="a\nb", new_string="a\nB\nB2")
    assert not r.is_error, r.text
    assert s.read("a.txt") == b"a  \r\nB\r\nB2\r\nc\r\n"


def test_a_change_of_line_ending_alone_shows_in_the_diff(fs):
    s = _session(fs, {"a.txt": b"x\ntwo\ny\n"})
    r = s.call("edit_file", path="a.txt", old_string="two\n", new_string="two\r\n")
    assert not r.is_error, r.text
    assert s.read("a.txt") == b"x\ntwo\r\ny\n"
    assert "-two\n+two\n\\ line ending of \"two\" changed from LF to CRLF" in r.text


def test_a_failed_fuzzy_edit_of_a_mixed_file_changes_nothing(fs, unchanged):
    s = _session(fs, {"a.txt": MIXED})
    before = unchanged(s.workspace, "a.txt")
    r = s.call("edit_file", path="a.txt", old_string="two\nTHREE", new_string="x")
    assert err(r) == "FS_NO_MATCH"
    before.check()
