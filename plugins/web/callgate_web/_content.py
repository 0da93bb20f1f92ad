"""What a fetched body is (HTML, verbatim text, or neither) and how its bytes become text.

Classification follows the media type and sniffs only when the server sent no
useful type; decoding follows the declared charset, then a BOM, then (for
HTML) a ``<meta>`` declaration, then UTF-8. Undecodable bytes become U+FFFD
rather than failing the fetch.
"""

from __future__ import annotations

import codecs
from typing import Literal

Kind = Literal["html", "text"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
VERBATIM_TYPES = frozenset({
    "application/json", "application/xml", "application/javascript", "application/yaml",
    "application/x-yaml", "application/toml",
})
SNIFF_HTML_BYTES = 512
SNIFF_TEXT_BYTES = 8192

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def split_content_type(header: str | None) -> tuple[str, str | None]:
    """``(media type lower-cased, charset or None)`` of a ``Content-Type`` header."""
    if not header:
        return "", None
    from email.message import Message  # here: email is ~15 modules no registration needs

    msg = Message()
    msg["content-type"] = header
    media_type = header.split(";", 1)[0].strip().lower()
    charset = msg.get_param("charset")
    if isinstance(charset, tuple):  # RFC 2231 form
        charset = charset[2]
    return media_type, (str(charset).strip() or None) if charset else None


def kind_from_type(media_type: str) -> Kind | Literal["sniff"] | None:
    """HTML, verbatim text, "sniff" (no useful type: look at the bytes) or ``None`` (refused)."""
    if media_type in HTML_TYPES:
        return "html"
    if media_type in ("", "application/octet-stream"):
        return "sniff"
    if media_type.startswith("text/") or media_type in VERBATIM_TYPES:
        return "text"
    if media_type.endswith("+json") or media_type.endswith("+xml"):
        return "text"
    return None


def _strip_bom(data: bytes) -> bytes:
    for bom, _name in _BOMS:
        if data.startswith(bom):
            return data[len(bom):]
    return data


def sniff(media_type: str, data: bytes) -> Kind | None:
    """The kind of an untyped (or ``application/octet-stream``) body, from its first bytes."""
    head = _strip_bom(data[: SNIFF_HTML_BYTES + 4]).lstrip()[:SNIFF_HTML_BYTES].lower()
    if head.startswith(b"<!doctype html") or b"<html" in head:
        return "html"
    if media_type:
        return None  # application/octet-stream that is not HTML stays binary
    start = data[:SNIFF_TEXT_BYTES]
    if b"\x00" in start:
        return None
    try:
        # final=False: a multi-byte character cut by the 8 KiB window is not an error
        codecs.getincrementaldecoder("utf-8")().decode(start, final=False)
    except UnicodeDecodeError:
        return None
    return "text"


def _known(name: str | None) -> str | None:
    if not name:
        return None
    try:
        info = codecs.lookup(name.strip().strip("\"'"))
    except (LookupError, ValueError):
        return None
    # bytes-to-bytes codecs (base64, zlib, ...) are codecs too, but not text encodings
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info.name


def choose_encoding(charset: str | None, data: bytes, kind: Kind) -> tuple[str, int]:
    """``(codec name, bytes to skip)``: declared charset, BOM, HTML ``<meta>``, else UTF-8."""
    declared = _known(charset)
    if declared:
        return declared, 0
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    if kind == "html":
        from bs4.dammit import EncodingDetector  # bs4 costs ~50 ms: import it for HTML only

        meta = _known(EncodingDetector.find_declared_encoding(
            data[:2048], is_html=True, search_entire_document=True))
        if meta:
            return meta, 0
    return "utf-8", 0


def decode(data: bytes, charset: str | None, kind: Kind, cut: bool) -> str:
    """The body as text. A cut body drops a character split by the cut instead of
    showing U+FFFD for it."""
    encoding, skip = choose_encoding(charset, data, kind)
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return decoder.decode(data[skip:], final=not cut)
    except (LookupError, TypeError, ValueError):
        return data[skip:].decode("utf-8", "replace")
