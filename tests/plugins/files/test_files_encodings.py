"""Encodings, line endings and modes survive edits (files.md §3, §4; statements 11-18)."""

from __future__ import annotations

import os
import stat

import pytest


def _edit(s, path, old, new):
    assert not s.call("read_file", path=path, limit=1).is_error
    r = s.call("edit_file", path=path, old_string=old, new_string=new)
    assert not r.is_error, r.text
    return r


def test_utf8_bom_is_kept(fs):  # 11
    s = fs({"b.py": b"\xef\xbb\xbfx = 1\n"})
    assert s.call("read_file", path="b.py").text == "1→x = 1"
    _edit(s, "b.py", "x = 1", "x = 2")
    assert s.read("b.py") == b"\xef\xbb\xbfx = 2\n"


def test_utf16le_bom_with_crlf_is_kept(fs):  # 12
    data = b"\xff\xfe" + "a\r\nb\r\n".encode("utf-16-le")
    s = fs({"u.txt": data})
    assert s.call("read_file", path="u.txt").text == "1→a\n2→b"
    _edit(s, "u.txt", "b", "c")
    assert s.read("u.txt") == b"\xff\xfe" + "a\r\nc\r\n".encode("utf-16-le")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_bomless_utf16_reads_as_text_and_stays_bomless(fs, codec):  # 13
    s = fs({"n.txt": "hello world\nsecond line\n".encode(codec)})
    assert s.call("read_file", path="n.txt").text == "1→hello world\n2→second line"
    _edit(s, "n.txt", "second", "2nd")
    assert s.read("n.txt") == "hello world\n2nd line\n".encode(codec)


def test_gbk_stays_gb18030_and_new_files_are_utf8(fs):  # 14, as issue 26 refines it
    # four bytes of GBK are no evidence (cp1251 decodes as GB18030 just as well): only a
    # declared GB18030 file is edited with Chinese text
    s = fs({"g.txt": "你好\n".encode("gbk")},
           config={"files": {"encodings": {"*.txt": "gb18030"}}})
    assert s.call("read_file", path="g.txt").text == \
        '1→你好\n\n[encoding: gb18030, declared by [files] encodings "*.txt"]'
    _edit(s, "g.txt", "你好", "再见")
    assert s.read("g.txt") == "再见\n".encode("gb18030")
    assert not s.call("write_file", path="new.py", content="你好").is_error
    assert s.read("new.py") == "你好".encode()


def test_undecodable_bytes_round_trip(fs):  # 15
    s = fs({"l.txt": b"caf\xe9\nx = 1\n"})
    r = s.call("read_file", path="l.txt")
    assert "caf\ufffd" in r.text and "[invalid bytes are shown as U+FFFD" in r.text
    _edit(s, "l.txt", "x = 1", "x = 2")
    assert s.read("l.txt") == b"caf\xe9\nx = 2\n"


def test_crlf_files_take_lf_old_and_new_strings(fs):  # 16
    s = fs({"c.txt": b"one\r\ntwo\r\nthree\r\n", "f.txt": b"one   \r\ntwo   \r\nthree\r\n"})
    r = _edit(s, "c.txt", "one\ntwo", "ONE\nTWO")
    assert "(fuzzy match)" not in r.text.splitlines()[0]
    assert s.read("c.txt") == b"ONE\r\nTWO\r\nthree\r\n"
    r = _edit(s, "f.txt", "one\ntwo", "ONE\nTWO")
    assert r.text.splitlines()[0] == "edited f.txt (fuzzy match)"
    assert s.read("f.txt") == b"ONE\r\nTWO\r\nthree\r\n"


def test_write_file_keeps_crlf_unless_content_has_cr(fs):  # 17
    s = fs({"w.txt": b"a\r\nb\r\n"})
    s.call("read_file", path="w.txt")
    r = s.call("write_file", path="w.txt", content="x\ny\n")
    assert r.text == "wrote 6 bytes to w.txt"
    assert s.read("w.txt") == b"x\r\ny\r\n"
    r = s.call("write_file", path="w.txt", content="x\r\ny\n")
    assert s.read("w.txt") == b"x\r\ny\n"
    r = s.call("write_file", path="w.txt", content="x\r\ny\n")
    assert r.text == "w.txt already has exactly this content; nothing written"


def test_permission_bits_survive_and_new_files_follow_umask(fs):  # 18
    s = fs({"run.sh": "echo hi\n"})
    os.chmod(s.path("run.sh"), 0o755)
    _edit(s, "run.sh", "hi", "bye")
    assert stat.S_IMODE(os.stat(s.path("run.sh")).st_mode) == 0o755
    old = os.umask(0o022)
    try:
        assert not s.call("write_file", path="fresh.txt", content="x").is_error
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(s.path("fresh.txt")).st_mode) == 0o644


def test_makefile_tabs_survive_an_edit_elsewhere(fs):
    s = fs({"Makefile": "all: build\n\tgcc -o app main.c\n\nclean:\n\trm -f app\n"})
    _edit(s, "Makefile", "all: build", "all: build test")
    assert s.read("Makefile") == b"all: build test\n\tgcc -o app main.c\n\nclean:\n\trm -f app\n"


def test_gb18030_utf16_bom_round_trip_unchanged_except_the_edit(fs):
    text = "第一行\n第二行 x\n第三行\n"
    for name, data in {"g.txt": text.encode("gb18030"),
                       "u16.txt": b"\xfe\xff" + text.encode("utf-16-be"),
                       "bom.txt": b"\xef\xbb\xbf" + text.encode()}.items():
        s = fs({name: data})
        _edit(s, name, "x", "y")
        assert s.read(name) == data.replace("x".encode(_codec(name)), "y".encode(_codec(name)))


def _codec(name):
    return {"g.txt": "gb18030", "u16.txt": "utf-16-be", "bom.txt": "utf-8"}[name]
