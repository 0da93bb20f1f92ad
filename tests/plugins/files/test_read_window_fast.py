"""read_file's window of a small file (issue 38, the served read): cut from the bytes in
memory by one split, and a clean UTF-8 window decoded once rather than line by line. The
rows are exactly what the line-by-line path makes, for every kind of line."""

from __future__ import annotations

import random

import pytest
from callgate.text import decode_bytes, display, display_line, has_escapes
from callgate_files import _window
from callgate_files._window import Reader, read_window
from callgate_files.tools import read_file


def _slow_window(data: bytes, start: int, first: int, limit: int) -> _window.Window:
    """`read_window` through its search per line (the path for files not held whole)."""
    reader = Reader(None, len(data), data)
    reader.head = b""  # nothing held: every byte comes through `read`, as from the file
    reader.read = lambda pos, n: data[pos:min(pos + n, len(data))]  # type: ignore[method-assign]
    return read_window(reader, "utf-8", start, first, limit)


def _slow_rows(lines: list[bytes], encoding: str, first: int, width: int) -> list[str]:
    return [f"{n:>{width}}→{display(display_line(decode_bytes(raw, encoding, strip_bom=False)))}"
            for n, raw in enumerate(lines, first)]


PIECES = [b"a", b"xyz", b"\r", b"\r\n", b"\n", b"\n\n", b"\xc3\xa9", b"\xe2\x82", b"\xff",
          b"\t", b"\x1b[0m", "€".encode(), b" ", b"\r\r\n"]


@pytest.mark.parametrize("seed", range(300))
def test_the_in_memory_window_and_the_rows_are_the_line_by_line_ones(seed):
    rng = random.Random(seed)
    data = b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    start = rng.choice(starts)
    if start >= len(data):
        return
    limit = rng.randint(1, 12)
    fast = read_window(Reader(None, len(data), data), "utf-8", start, 3, limit)
    slow = _slow_window(data, start, 3, limit)
    assert (fast.first, fast.lines, fast.more) == (slow.first, slow.lines, slow.more)
    width = len(str(3 + len(fast.lines) - 1))
    rows = read_file._clean_rows(fast.lines, "utf-8", 3, width)
    lossy = any(has_escapes(decode_bytes(raw, "utf-8", strip_bom=False)) for raw in fast.lines)
    if lossy:  # shown as U+FFFD: the line-by-line path, which notes it
        assert rows is None
    else:
        assert rows == _slow_rows(fast.lines, "utf-8", 3, width)


def test_a_clean_window_is_decoded_once_not_per_line(fs, monkeypatch):
    s = fs({"f.txt": "".join(f"line {i}\r\n" if i % 3 else f"line {i} é\n" for i in range(40))})
    decodes = []
    real = read_file.decode_bytes
    monkeypatch.setattr(read_file, "decode_bytes",
                        lambda *a, **k: decodes.append(a[0]) or real(*a, **k))
    text = s.expect_ok("read_file", {"path": "f.txt"})
    assert text.splitlines()[:2] == [" 1→line 0 é", " 2→line 1"]
    assert len(decodes) == 1  # 40 before: one per line


def test_a_small_file_s_window_makes_no_search_per_line(fs, monkeypatch):
    s = fs({"f.txt": "".join(f"line {i}\n" for i in range(40))})
    finders = []
    real = _window._newline_finder
    monkeypatch.setattr(_window, "_newline_finder",
                        lambda enc: finders.append(enc) or real(enc))
    s.expect_ok("read_file", {"path": "f.txt", "offset": 5, "limit": 10})
    assert finders == ["utf-8"]  # the offset's locate only; read_window searched too before


def test_a_whole_utf8_file_is_not_detected_again_for_its_observation(fs, monkeypatch):
    """The observation's text of a file read whole comes from the detection the read just
    made (UTF-8 found on the whole file), not from a second `decode_text`; an edit after
    the read still matches against it."""
    s = fs({"f.txt": "".join(f"line {i} é\n" for i in range(40))})
    detections = []
    real = read_file.decode_text
    monkeypatch.setattr(read_file, "decode_text",
                        lambda *a, **k: detections.append(a[0]) or real(*a, **k))
    s.expect_ok("read_file", {"path": "f.txt"})
    assert detections == []  # 1 before
    s.expect_ok("edit_file", {"path": "f.txt", "old_string": "line 3 é", "new_string": "x"})
    assert s.path("f.txt").read_text().splitlines()[3] == "x"


@pytest.mark.parametrize("data", [
    b"plain\n", b"caf\xc3\xa9\r\n", b"\xef\xbb\xbfbom\n", b"bad \xff byte\n",
    b"# -*- coding: latin-1 -*-\ncaf\xe9\n", b"\xff\xfeu\x00t\x00f\x00",
    "# coding: utf-8\nx = 'é'\n".encode(), b"",
])
def test_the_observation_s_text_is_decode_text_s(data):
    from callgate.text import decode_text, detect

    found = detect(data, complete=True, declared=None)
    assert read_file._snapshot(data, True, found.encoding, None) == decode_text(data).text
