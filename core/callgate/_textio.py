"""Text files as bytes and back (files.md §3): encodings, binary detection, line endings.

A structured edit must give back every byte it did not mean to change, so a
file's encoding is detected once and the same kind encodes the result: BOMs
and byte order come back, GB18030 stays GB18030, and bytes that decode as
nothing (``caf\\xe9``) ride through the text as surrogate escapes and come out
exactly as they went in.
"""

from __future__ import annotations

import codecs
from typing import Literal

import attrs

#: The encoding kinds, in the order detection tries them (files.md §3).
ENCODINGS = ("utf-8-bom", "utf-16-le-bom", "utf-16-be-bom", "utf-16-le", "utf-16-be",
             "utf-8", "gb18030", "utf-8-lossy")

BOMS: dict[str, bytes] = {
    "utf-8-bom": codecs.BOM_UTF8,
    "utf-16-le-bom": codecs.BOM_UTF16_LE,
    "utf-16-be-bom": codecs.BOM_UTF16_BE,
}

CODECS: dict[str, str] = {
    "utf-8": "utf-8",
    "utf-8-bom": "utf-8",
    "utf-8-lossy": "utf-8",
    "utf-16-le-bom": "utf-16-le",
    "utf-16-be-bom": "utf-16-be",
    "utf-16-le": "utf-16-le",
    "utf-16-be": "utf-16-be",
    "gb18030": "gb18030",
}

#: How many leading bytes decide "binary" and BOM-less UTF-16.
PROBE_BYTES = 8192
UTF16_MIN_BYTES = 16

LineStyle = Literal["lf", "crlf", "mixed"]


def _lenient(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler: a lone surrogate that no codec can write becomes U+FFFD."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "\ufffd".encode(exc.encoding), exc.start + 1


def _escape_or_lenient(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler for lossy text: escaped bytes (U+DC80..U+DCFF) come back as the
    bytes they stood for; any other unencodable character becomes U+FFFD."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    ch = exc.object[exc.start]
    if 0xDC80 <= ord(ch) <= 0xDCFF:
        return bytes([ord(ch) - 0xDC00]), exc.start + 1
    return "\ufffd".encode(exc.encoding), exc.start + 1


codecs.register_error("callgate-lenient", _lenient)
codecs.register_error("callgate-escape", _escape_or_lenient)


def _decodes(data: bytes, codec: str, complete: bool) -> bool:
    """True if ``data`` decodes strictly; a sample may end mid-character when not complete."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    try:
        decoder.decode(data, final=complete)
    except UnicodeDecodeError:
        return False
    return True


def _utf16_guess(sample: bytes) -> str | None:
    probe = sample[:PROBE_BYTES]
    probe = probe[: len(probe) // 2 * 2]
    pairs = len(probe) // 2
    if len(probe) < UTF16_MIN_BYTES or pairs == 0:
        return None
    even = probe[0::2].count(0)
    odd = probe[1::2].count(0)
    if odd >= 0.30 * pairs and even <= 0.05 * pairs:
        return "utf-16-le"
    if even >= 0.30 * pairs and odd <= 0.05 * pairs:
        return "utf-16-be"
    return None


def detect_encoding(sample: bytes, *, complete: bool = True) -> str:
    """The encoding kind of a file whose first bytes are ``sample``.

    ``complete`` says the sample is the whole file; otherwise a sample cut in the
    middle of a character is tolerated. First hit wins: BOM, BOM-less UTF-16,
    strict UTF-8, strict GB18030, else lossy UTF-8.
    """
    for kind, bom in BOMS.items():
        if sample.startswith(bom):
            return kind
    guess = _utf16_guess(sample)
    if guess is not None:
        body = sample if complete else sample[: len(sample) // 2 * 2]
        if _decodes(body, CODECS[guess], complete):
            return guess
    if _decodes(sample, "utf-8", complete):
        return "utf-8"
    if _decodes(sample, "gb18030", complete):
        return "gb18030"
    return "utf-8-lossy"


def is_binary(sample: bytes, encoding: str) -> bool:
    """A NUL byte among the first 8 KiB of a file that is not UTF-16."""
    return not encoding.startswith("utf-16") and b"\x00" in sample[:PROBE_BYTES]


def bom_of(encoding: str) -> bytes:
    return BOMS.get(encoding, b"")


def unit_of(encoding: str) -> int:
    """Bytes per code unit: 2 for UTF-16 (its newline is a 2-byte unit), else 1."""
    return 2 if encoding.startswith("utf-16") else 1


def newline_bytes(encoding: str) -> bytes:
    """How ``\\n`` is encoded in this kind."""
    if encoding.startswith("utf-16-le"):
        return b"\n\x00"
    if encoding.startswith("utf-16-be"):
        return b"\x00\n"
    return b"\n"


def decode_bytes(data: bytes, encoding: str, *, strip_bom: bool = True) -> str:
    """Decode ``data`` (a whole file or a piece of one) as ``encoding``, BOM dropped.

    Undecodable bytes become surrogate escapes (``surrogateescape``), so they
    encode back exactly; `display` turns them into U+FFFD for the model.
    """
    bom = bom_of(encoding)
    if strip_bom and bom and data.startswith(bom):
        data = data[len(bom):]
    return data.decode(CODECS[encoding], "surrogateescape")


def encode_text(text: str, encoding: str, *, bom: bool = True) -> bytes:
    """Encode ``text`` in ``encoding``, restoring its BOM; any text the model sends encodes."""
    codec = CODECS[encoding]
    handler = "callgate-escape" if encoding == "utf-8-lossy" else "callgate-lenient"
    try:
        body = text.encode(codec)
    except UnicodeEncodeError:
        body = text.encode(codec, handler)
    return (bom_of(encoding) if bom else b"") + body


def has_escapes(text: str) -> bool:
    """True if ``text`` carries undecodable bytes (surrogate escapes)."""
    if not _maybe_escapes(text):
        return False
    return any(0xDC80 <= ord(c) <= 0xDCFF for c in text)


def _maybe_escapes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def display(text: str) -> str:
    """``text`` as the model reads it: undecodable bytes shown as U+FFFD."""
    if not _maybe_escapes(text):
        return text
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def line_style(text: str) -> LineStyle:
    """``crlf``: has CRLF and no bare LF; ``lf``: no CRLF; else ``mixed``."""
    crlf = text.count("\r\n")
    if crlf == 0:
        return "lf"
    return "crlf" if crlf == text.count("\n") else "mixed"


def to_crlf(text: str) -> str:
    """Every line ending as CRLF (CRLF already there stays one CRLF)."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def split_lines(text: str) -> list[str]:
    """Lines with their terminators; a final ``\\n`` starts no extra line."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def display_line(line: str) -> str:
    """A line's display text: without its ``\\n`` and one ``\\r`` before it."""
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def display_lines(text: str) -> list[str]:
    """The display text of every line of ``text``."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


@attrs.frozen
class DecodedText:
    """A file's content as text, with what it takes to write it back byte for byte.

    ``encoding`` is one of `ENCODINGS`; ``text`` has no BOM; undecodable bytes
    (lossy kind) are surrogate escapes.
    """

    text: str
    encoding: str

    @property
    def style(self) -> LineStyle:
        return line_style(self.text)

    @property
    def lossy(self) -> bool:
        return self.encoding == "utf-8-lossy"

    def encode(self, text: str | None = None) -> bytes:
        """``text`` (default: this text) in this kind, BOM and byte order included."""
        return encode_text(self.text if text is None else text, self.encoding)

    def adapt(self, text: str) -> str:
        """New text for this file's endings: in a ``crlf`` file, LF-only text becomes CRLF."""
        if self.style == "crlf" and "\r" not in text:
            return to_crlf(text)
        return text


def decode_text(data: bytes) -> DecodedText:
    """Detect the encoding of a whole file and decode it (see `detect_encoding`).

    One pass for the common case: a strict UTF-8 decode both proves the kind and
    yields the text.
    """
    if not data.startswith(tuple(BOMS.values())) and _utf16_guess(data) is None:
        try:
            return DecodedText(data.decode("utf-8"), "utf-8")
        except UnicodeDecodeError:
            pass
    encoding = detect_encoding(data, complete=True)
    return DecodedText(decode_bytes(data, encoding), encoding)
