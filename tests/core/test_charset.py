"""Declared and guessed encodings (issue 26), directly: coding lines, usable codecs, the
guess and when it is no guess, the ``[files] encodings`` globs, and the display mapping
of diffs and stale details."""

from __future__ import annotations

import pytest
from callgate._files.declared import declared_in, encoding_rules
from callgate.text import Declaration, coding_declaration, decode_text, detect, usable_codec
from callgate_toolkit.diffs import change_diff


@pytest.mark.parametrize("head,name", [
    (b"# -*- coding: cp1251 -*-\nx = 1\n", "cp1251"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n", "latin-1"),
    (b"# coding=utf-8\n", "utf-8"),
    (b"x = 1\n# -*- coding: cp1251 -*-\n", None),          # line 2 only after a comment
    (b"\n\n# coding: cp1251\n", None),                       # line 3 is too late
    (b'<?xml version="1.0" encoding="windows-1251"?>\n<a/>', "windows-1251"),
    (b"plain text\n", None),
])
def test_coding_declarations(head, name):
    assert coding_declaration(head) == name


def test_usable_codecs_are_stateless_ascii_compatible_text_codecs():
    assert usable_codec("CP1251") == ("cp1251", "")
    assert usable_codec("GBK")[0] == "gbk" and usable_codec("latin-1")[0] == "iso8859-1"
    assert usable_codec("utf-16")[0] == "utf-16"
    for bad in ("no-such-codec", "cp037", "utf-7", "iso2022_jp", "base64", "utf-32"):
        assert usable_codec(bad)[0] is None, bad


@pytest.mark.parametrize("text,codec", [
    ("# Загрузка конфигурации из файла\ndef load(path):\n    return path  # разбор\n", "cp1251"),
    ("/* 读取配置文件并返回结果 */\nint main(void) { return 0; } // 打印问候\n", "gb18030"),
    ("# 設定ファイルを読み込む\nx = 1  # 初期値\n", "cp932"),
])
def test_a_clear_guess_is_marked_guessed(text, codec):
    data = text.encode(codec if codec != "cp932" else "shift_jis")
    found = detect(data)
    assert (found.encoding, found.basis, found.settled) == (codec, "guessed", False)
    decoded = decode_text(data)
    assert decoded.text == text and decoded.encode() == data


@pytest.mark.parametrize("data", [
    b"# \xd2\xe5\xf1\xf2\nx = 1\n",     # cp1251 "Тест": as valid GB18030, Big5, cp1252...
    b'a = "\xcf\xf0\xe8"\nb = 1\n',      # too few bytes to tell
    "你好\n".encode("gbk"),
    "Größe über alles, très naïve\n".encode()[:-3] + b"\xe9\n",  # damaged UTF-8
])
def test_no_clear_guess_is_lossy_utf8_of_unknown_encoding(data):
    found = detect(data)
    assert (found.encoding, found.basis) == ("utf-8-lossy", "unknown")
    assert decode_text(data).encode() == data


def test_declarations_outrank_detection_and_a_bom_outranks_them():
    ascii_file = b"# -*- coding: cp1251 -*-\nx = 1\n"
    found = detect(ascii_file)
    assert (found.encoding, found.basis, found.origin) == ("cp1251", "declared", "its coding line")
    config = Declaration("koi8-r", '[files] encodings "*.py"')
    assert detect(ascii_file, declared=config).encoding == "koi8-r"
    assert detect(b"\xef\xbb\xbf# coding: cp1251\n", declared=config).encoding == "utf-8-bom"
    unknown = detect(b"# coding: nonsense\nx\n")
    assert unknown.encoding == "utf-8" and "nonsense" in unknown.note
    wrong = detect(b'<?xml version="1.0" encoding="UTF-16"?>\n<a/>\n')
    assert wrong.encoding == "utf-8" and "UTF-16" in wrong.note
    declared_utf8 = decode_text(b"# coding: utf-8\ncaf\xe9\n")
    assert (declared_utf8.encoding, declared_utf8.basis) == ("utf-8-lossy", "declared")


def test_config_globs_use_the_permission_glob_rules(tmp_path):
    root = str(tmp_path)
    rules = encoding_rules({"legacy/**": "cp1251", "legacy/utf/*.py": "utf-8",
                            "*.txt": "latin-1", "/abs/**": "gbk", "[bad": "cp1251"})

    def codec(rel):
        found = declared_in(rules, f"{root}/{rel}" if not rel.startswith("/") else rel, root)
        return found.codec if found else None

    assert codec("legacy/a/b/c.py") == "cp1251"          # ** crosses /
    assert codec("legacy/utf/x.py") == "utf-8"            # the last match wins
    assert codec("legacy/utf/deeper/x.py") == "cp1251"    # * does not cross /
    assert codec("notes.txt") == "latin-1" and codec("sub/notes.txt") is None
    assert codec("/abs/x/y.c") == "gbk"
    assert codec("other.py") is None


def test_diffs_show_undecodable_bytes_as_read_file_does():
    old = decode_text(b'a = "\xcf\xf0\xe8"\nb = 1\n').text
    diff = change_diff(old, old.replace("b = 1", "b = 2"), "a.py")
    assert ' a = "\ufffd\ufffd\ufffd"' in diff.text
    diff.text.encode("utf-8")  # strict
    created = change_diff(None, "x\udcff\n", "n.py")
    assert created.text.endswith("+x\ufffd")
