"""apply_patch's hunk placement on its own: generated files with every kind of line ending,
a generated change, and the text Codex's rules say comes out (``_hunks``, ``_v4a``)."""

from __future__ import annotations

from callgate_files._hunks import FileLines, locate
from callgate_files._matching import Edited
from callgate_files._v4a import PatchError, parse_patch
from hypothesis import given, settings
from hypothesis import strategies as st

ENDINGS = st.sampled_from(["\n", "\r\n"])
WORDS = st.text(alphabet="abcxyz =()", min_size=0, max_size=6)


@st.composite
def files_and_changes(draw):
    n = draw(st.integers(1, 12))
    # distinct, non-blank lines, so the hunk has one place (a blank line could also match
    # a whitespace-only one, a legitimate looser match)
    texts = [f"{i}:{w}" for i, w in enumerate(draw(st.lists(WORDS, min_size=n, max_size=n)))]
    endings = draw(st.lists(ENDINGS, min_size=n, max_size=n))
    if draw(st.booleans()):
        endings[-1] = ""  # no newline at the end
    start = draw(st.integers(0, n - 1))
    stop = draw(st.integers(start, min(n, start + 4)))
    before = draw(st.integers(0, min(2, start)))
    after = draw(st.integers(0, min(2, n - stop)))
    new = draw(st.lists(WORDS.map(lambda w: "new " + w), max_size=3))
    return texts, endings, start, stop, before, after, new


@settings(max_examples=300, deadline=None)
@given(files_and_changes())
def test_a_generated_change_lands_where_codex_puts_it(case):
    texts, endings, start, stop, before, after, new = case
    text = "".join(t + e for t, e in zip(texts, endings, strict=True))
    body = [" " + t for t in texts[start - before:start]]
    body += ["-" + t for t in texts[start:stop]]
    body += ["+" + t for t in new]
    body += [" " + t for t in texts[stop:stop + after]]
    if not any(line[0] in " -" for line in body):
        return  # a pure addition appends at the end: the scenarios cover it
    patch = "*** Begin Patch\n*** Update File: f\n@@\n" + "\n".join(body) + "\n*** End Patch"
    [op] = parse_patch(patch)
    lines = FileLines(text)
    located = locate(lines, op.chunks)
    got = Edited(text, located.pieces, len(located.pieces), False).text
    preferred = "\r\n" if endings[0] == "\r\n" else "\n"
    # Codex: lines outside the change and context lines keep their text and ending; new
    # lines get the file's first ending; the file ends with an ending
    kept = [t + e for t, e in zip(texts, endings, strict=True)]
    want = "".join(kept[:start]) + "".join(t + preferred for t in new) + "".join(kept[stop:])
    if want and not want.endswith("\n"):
        want += preferred
    assert got == want
    assert located.fuzz == 0


def test_offsets_match_the_text_for_every_line_ending_mix():
    for text in ["", "a", "a\n", "a\r\nb", "a\rb\nc\r\n", "\r\n\r\n", "x\r", "a\r\nb\r"]:
        lines = FileLines(text)
        starts = [0]
        for part in text.split("\n")[:-1]:
            starts.append(starts[-1] + len(part) + 1)
        want = [*starts[:len(lines)], len(text)]
        assert [lines.offset(i) for i in range(len(lines) + 1)] == want, text


def test_parse_errors_name_the_line_in_the_text_as_sent():
    for text, line, message in [
            ("\n\n*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Bogus\n*** End Patch", 8,
             "'*** Bogus' is not a valid hunk header"),
            ("*** Begin Patch\n*** Update File: a\n@@\n-x\n@@ nope\nbad\n*** End Patch", 6,
             "Unexpected line found in update hunk: 'bad'"),
            ("<<'EOF'\n*** Begin Patch\n*** Update File: a\n*** End Patch\nEOF", 3,
             "Update file hunk for path 'a' is empty")]:
        try:
            parse_patch(text)
        except PatchError as exc:
            assert (exc.line, message in exc.message) == (line, True), (text, exc)
        else:
            raise AssertionError(f"parsed: {text!r}")
