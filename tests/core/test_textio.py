"""Encodings and line endings (files.md §3), directly."""

from __future__ import annotations

import pytest
from callgate.text import (
    decode_text,
    detect_encoding,
    display,
    display_lines,
    encode_text,
    is_binary,
    line_style,
    split_lines,
    to_crlf,
)


@pytest.mark.parametrize("data,kind", [
    (b"\xef\xbb\xbfx", "utf-8-bom"), (b"\xff\xfex\x00", "utf-16-le-bom"),
    (b"\xfe\xff\x00x", "utf-16-be-bom"), ("hello world, hi\n".encode("utf-16-le"), "utf-16-le"),
    ("hello world, hi\n".encode("utf-16-be"), "utf-16-be"), ("héllo".encode(), "utf-8"),
    ("你好".encode("gbk"), "utf-8-lossy"),
    ("第一行\n第二行 x\n第三行\n".encode("gb18030"), "gb18030"),
    (b"caf\xe9\n", "utf-8-lossy"), (b"", "utf-8"),
])
def test_detection_order(data, kind):
    assert detect_encoding(data) == kind


def test_short_utf16_needs_sixteen_bytes_and_cut_samples_are_tolerated():
    assert detect_encoding("hi\n".encode("utf-16-le")) != "utf-16-le"
    cut = "é" * 10
    assert detect_encoding(cut.encode()[:-1], complete=False) == "utf-8"
    assert detect_encoding(cut.encode()[:-1], complete=True) != "utf-8"


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbfa\r\nb\n", b"\xff\xfe" + "a\nb".encode("utf-16-le"),
    "x\ny\n".encode("utf-16-be"), "再见\r\n".encode("gb18030"), b"caf\xe9\xff\n\x80",
    b"plain\n",
])
def test_decode_encode_round_trips_every_kind(data):
    decoded = decode_text(data)
    assert decoded.encode() == data


def test_any_text_encodes_in_every_kind():
    for kind in ("utf-8", "utf-8-bom", "utf-16-le", "utf-16-be-bom", "gb18030", "utf-8-lossy"):
        assert encode_text("a\ud800b\U0001f600", kind)


def test_lossy_display_and_binary():
    text = decode_text(b"caf\xe9").text
    assert display(text) == "caf\ufffd"
    assert is_binary(b"a\x00b", "utf-8-lossy") and not is_binary(b"a\x00b", "utf-16-le")
    assert not is_binary(b"a" * 9000 + b"\x00", "utf-8")


def test_line_styles_and_lines():
    assert (line_style("a\r\nb\r\n"), line_style("a\nb"), line_style("a\r\nb\n")) == \
        ("crlf", "lf", "mixed")
    assert line_style("no newline") == "lf"
    assert split_lines("a\r\nb\nc") == ["a\r\n", "b\n", "c"] and split_lines("a\n") == ["a\n"]
    assert display_lines("a\r\nb\r\r\n") == ["a", "b\r"]
    assert to_crlf("a\nb\r\nc") == "a\r\nb\r\nc"
    assert decode_text(b"a\r\n").adapt("x\ny") == "x\r\ny"
    assert decode_text(b"a\r\n").adapt("x\r\ny\n") == "x\r\ny\n"
