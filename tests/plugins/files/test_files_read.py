"""read_file windows (files.md §6.1; statements 1-10 and 58)."""

from __future__ import annotations

import os
import time

from .conftest import err, full_text


def test_crlf_lines_display_without_terminators(fs):  # 1
    s = fs({"a.txt": b"a\r\nb\r\nc"})
    assert s.call("read_file", path="a.txt").text == "1→a\n2→b\n3→c"


def test_window_numbers_are_right_aligned_and_trailer_gives_next_offset(fs):  # 2
    s = fs({"a.txt": "".join(f"line {i}\n" for i in range(1, 121))})
    r = s.call("read_file", path="a.txt", offset=97, limit=5)
    assert r.text == (" 98→line 98\n 99→line 99\n100→line 100\n101→line 101\n102→line 102"
                      "\n\n[lines 98-102 shown; more follow: call read_file with offset=102 to "
                      "continue]")


def test_full_window_has_no_trailer_and_past_end_still_observes(fs):  # 3
    s = fs({"x.txt": "a\nb\nc\n"})
    assert s.call("read_file", path="x.txt", limit=3).text == "1→a\n2→b\n3→c"
    s2 = s.child()
    r = s2.call("read_file", path="x.txt", offset=3)
    assert r.text == "(offset 3 is past the end: x.txt has 3 lines)"
    w = s2.call("write_file", path="x.txt", content="new\n")
    assert not w.is_error, w.text
    assert s.read("x.txt") == b"new\n"


def test_empty_and_bom_only_files(fs):  # 4
    s = fs({"e.txt": b"", "bom.txt": b"\xef\xbb\xbf"})
    assert s.call("read_file", path="e.txt").text == "(empty file)"
    assert s.call("read_file", path="bom.txt").text == "(empty file)"
    assert s.call("read_file", path="e.txt", offset=5).text == "(empty file)"
    assert not s.call("write_file", path="e.txt", content="x").is_error


def test_line_too_long_only_inside_the_window(fs, unchanged):  # 5
    s = fs({"big.txt": b"a\n" + b"x" * 1_048_577 + b"\n", "ok.txt": b"y" * 1_048_576 + b"\n"})
    assert s.call("read_file", path="big.txt", limit=1).text == "1→a\n\n[lines 1-1 shown; " \
        "more follow: call read_file with offset=1 to continue]"
    fresh = s.child()
    r = fresh.call("read_file", path="big.txt", limit=2)
    assert err(r) == "FS_LINE_TOO_LONG"
    assert r.text.startswith("FS_LINE_TOO_LONG: line 2 of big.txt exceeds the 1 MiB read limit;")
    before = unchanged(s.workspace, "big.txt")
    assert err(fresh.call("edit_file", path="big.txt", old_string="a", new_string="b")) == \
        "FS_NOT_OBSERVED"
    before.check()
    r = s.call("read_file", path="ok.txt")
    # the core truncates what the model sees; the whole line was read
    assert not r.is_error and r.text.startswith("1→yyy")
    assert r.meta["original_bytes"] == len(("1→" + "y" * 1_048_576).encode())


def test_binary_is_refused_for_reading_and_editing_but_moves(fs, unchanged):  # 6
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    s = fs({"img.png": png})
    r = s.call("read_file", path="img.png")
    assert err(r) == "FS_BINARY" and "view_image" in r.text
    before = unchanged(s.workspace, "img.png")
    assert err(s.call("edit_file", path="img.png", old_string="PNG", new_string="X")) == \
        "FS_BINARY"
    before.check()
    r = s.call("move_file", source_path="img.png", destination_path="pics/img.png")
    assert r.text == "moved img.png to pics/img.png"
    assert s.read("pics/img.png") == png


def test_directory_and_fifo(fs):  # 7
    s = fs({"d/x.txt": "x"})
    r = s.call("read_file", path="d")
    assert err(r) == "FS_IS_DIRECTORY" and r.text == "FS_IS_DIRECTORY: d is a directory; list it " \
        "with ls"
    os.mkfifo(s.workspace / "pipe")
    t = time.monotonic()
    assert err(s.call("read_file", path="pipe")) == "FS_NOT_REGULAR"
    assert time.monotonic() - t < 1


def test_missing_file_then_create(fs):  # 8
    s = fs()
    r = s.call("read_file", path="new.txt")
    assert err(r) == "FS_NOT_FOUND" and r.error.kind == "not_found"
    assert r.text == "FS_NOT_FOUND: new.txt does not exist; create it only if needed"
    assert s.call("write_file", path="new.txt", content="hi").text == "created new.txt (2 bytes)"


def test_huge_file_windows_cost_what_they_show(fs, tmp_path):  # 9
    s = fs()
    line = b"x" * 99 + b"\n"
    n = 200 * 1024 * 1024 // 100
    with open(s.workspace / "huge.txt", "wb") as fh:
        block = line * 10_000
        for _ in range(n // 10_000):
            fh.write(block)
        fh.write(line * (n % 10_000))
    with open(s.workspace / "huge.txt", "r+b") as fh:
        fh.seek(1_000_000 * 100)
        fh.write(b"A" * 99 + b"\n" + b"B" * 99 + b"\n")
        fh.seek(0)
        fh.write(b"first" + b"x" * 94 + b"\n")
    r = s.call("read_file", path="huge.txt", limit=3)
    assert r.text.splitlines()[0] == "1→first" + "x" * 94
    assert r.text.endswith("[lines 1-3 shown; more follow: call read_file with offset=3 to "
                           "continue]")
    assert r.meta["bytes_read"] < 1 << 20
    r = s.call("read_file", path="huge.txt", offset=1_000_000, limit=2)
    assert r.text.splitlines()[:2] == ["1000001→" + "A" * 99, "1000002→" + "B" * 99]
    # a later window of the same version seeks through the index
    r = s.call("read_file", path="huge.txt", offset=999_999, limit=2)
    assert r.meta["bytes_read"] < 2 << 20
    assert r.text.startswith("1000000→" + "x" * 99 + "\n1000001→A")


def test_read_denylist(fs):  # 10
    files = {".env": "SECRET=1", "k.pem": "key", "ok.txt": "fine"}
    s = fs(files)
    assert s.call("read_file", path=".env").text == "1→SECRET=1"
    s = fs(files, config={"files": {"read_denylist": True}})
    for name in (".env", "k.pem"):
        r = s.call("read_file", path=name)
        assert err(r) == "FS_NOT_FOUND"
        assert r.text == f"FS_NOT_FOUND: {name} does not exist; create it only if needed"
    assert s.session.observations() == {}
    assert s.call("read_file", path="ok.txt").text == "1→fine"


def test_default_window_stops_at_one_mebibyte(fs):  # 58
    s = fs({"w.txt": ("x" * 999 + "\n") * 2000})
    r = s.call("read_file", path="w.txt")
    text = full_text(s, r)
    lines = text.split("\n")
    assert lines[0] == "   1→" + "x" * 999 and lines[1047] == "1048→" + "x" * 999
    assert len(lines) == 1048 + 2
    assert text.endswith("[lines 1-1048 shown; more follow: call read_file with offset=1048 "
                         "to continue]")
    again = s.call("read_file", path="w.txt", intent="understand", cursor="abc")
    assert full_text(s, again) == text


def test_invalid_bytes_note_and_changed_while_reading(fs):
    s = fs({"l.txt": b"caf\xe9\nx = 1\n"})
    r = s.call("read_file", path="l.txt")
    assert r.text == "1→caf\ufffd\n2→x = 1\n\n[invalid bytes are shown as U+FFFD; edits " \
        "elsewhere keep them]\n[l.txt is not valid UTF-8 and its encoding could not be told " \
        "(its undecodable bytes show as U+FFFD); it reads without an error as cp1252, cp1251, " \
        "and the text would show which, if any, is right: if you know its encoding, read it " \
        'again with encoding="<name>", which settles it for this version; until then edits ' \
        "that add non-ASCII text are refused (a coding line or the user's [files] encodings " \
        "also settle it; write_file of the whole file makes it UTF-8)]"


def test_utf16_windows_split_on_aligned_newlines(fs):
    text = "".join(f"línea {i}\u0a00\n" for i in range(1, 45000))
    data = b"\xff\xfe" + text.encode("utf-16-le")
    assert len(data) > 1 << 20
    s = fs({"u.txt": data})
    r = s.call("read_file", path="u.txt", offset=30000, limit=2)
    assert r.text.split("\n")[:2] == ["30001→línea 30001\u0a00", "30002→línea 30002\u0a00"]
    r = s.call("read_file", path="u.txt", offset=44999)
    assert r.text == "(offset 44999 is past the end: u.txt has 44999 lines)"


def test_large_file_past_end_and_unterminated_last_line(fs):
    body = ("y" * 99 + "\n") * 20000 + "tail"
    s = fs({"t.txt": body})
    r = s.call("read_file", path="t.txt", offset=20000)
    assert r.text == "20001→tail"
    r = s.call("read_file", path="t.txt", offset=20001)
    assert r.text == "(offset 20001 is past the end: t.txt has 20001 lines)"


def test_a_sample_cut_inside_a_character_still_detects_utf8(fs):
    # 300 KiB of two-byte characters: the 256 KiB detection sample ends mid-character
    body = ("é" * 50 + "\n") * 3000
    s = fs({"u.txt": body})
    r = s.call("read_file", path="u.txt", offset=2998)
    assert r.text == "2999→" + "é" * 50 + "\n3000→" + "é" * 50
    assert r.meta["encoding"] == "utf-8"


def test_deep_windows_without_numpy(fs, monkeypatch):
    import callgate_files._window as window

    monkeypatch.setattr(window, "_numpy", False)
    monkeypatch.setattr(window, "INDEXES", window.IndexCache())
    body = "".join(f"{i:07d}\n" for i in range(400_000))
    s = fs({"n.txt": body})
    r = s.call("read_file", path="n.txt", offset=345_678, limit=2)
    assert r.text.startswith("345679→0345678\n345680→0345679")
