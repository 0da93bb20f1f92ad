"""Text files as bytes and back (files.md §3): encodings, binary detection, line endings.

A structured edit must give back every byte it did not mean to change, so a
file's encoding is detected once and the same kind encodes the result: BOMs
and byte order come back, a cp1251 file stays cp1251, and bytes that decode as
nothing (``caf\\xe9``) ride through the text as surrogate escapes and come out
exactly as they went in.

Every decoding also says how sure it is (`Basis`): *detected* (a BOM, UTF-16's
byte pattern, strict UTF-8), *declared* (``[files] encodings``, a coding line or
an XML declaration), *guessed* (charset-normalizer, clearly ahead) or *unknown*
(lossy UTF-8). Only the first two are settled; the files tools refuse to add
non-ASCII text to a file whose encoding is not (issue 26).
"""

from __future__ import annotations

import codecs
import re
from typing import Literal

import attrs

from . import charset as _charset

#: The encoding kinds, in the order detection tries them (files.md §3).
ENCODINGS = (
    "utf-8-bom",
    "utf-16-le-bom",
    "utf-16-be-bom",
    "utf-16-le",
    "utf-16-be",
    "utf-8",
    "gb18030",
    "utf-8-lossy",
)

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
#: The leading bytes that decide a declaration or a guess: read_file's sample, so a
#: window and an edit of the same file always agree.
DETECT_BYTES = 256 << 10

LineStyle = Literal["lf", "crlf", "mixed"]
#: How an encoding was arrived at; ``detected`` and ``declared`` are settled.
Basis = Literal["detected", "declared", "guessed", "unknown"]


def codec_of(encoding: str) -> str:
    """The Python codec of an encoding kind (a declared or guessed kind is its codec)."""
    return CODECS.get(encoding, encoding)


def _replacement(encoding: str) -> bytes:
    """U+FFFD in ``encoding``, or ``?`` where it has none (a legacy code page)."""
    try:
        return "\ufffd".encode(encoding)
    except UnicodeEncodeError:
        return "?".encode(encoding)


def _lenient(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler: a character the codec cannot write becomes U+FFFD (or ``?``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return _replacement(exc.encoding), exc.start + 1


def _escape_or_lenient(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler for lossy text: escaped bytes (U+DC80..U+DCFF) come back as the
    bytes they stood for; any other unencodable character becomes U+FFFD (or ``?``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    ch = exc.object[exc.start]
    if 0xDC80 <= ord(ch) <= 0xDCFF:
        return bytes([ord(ch) - 0xDC00]), exc.start + 1
    return _replacement(exc.encoding), exc.start + 1


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


@attrs.frozen
class Declaration:
    """An encoding a file is declared to have from outside its bytes: ``codec`` as
    written, ``origin`` saying where (``[files] encodings "legacy/**"``, or the encoding
    read_file was given for the version it read); ``""`` for none. ``fallbacks`` (the
    user's ``[files] fallback_encodings``) are tried in order for a file that declares
    nothing and is not UTF-8: the first that decodes it strictly, and writes it back
    byte for byte, settles it."""

    codec: str
    origin: str
    fallbacks: tuple[str, ...] = ()


@attrs.frozen
class Detection:
    """An encoding kind, how it was arrived at, and why a declaration was passed over.

    ``origin`` names the declaration of a ``declared`` kind; ``note`` says why a
    declaration that was present is not used (an unknown codec, say), for read_file.
    """

    encoding: str
    basis: Basis = "detected"
    origin: str | None = None
    note: str | None = None

    @property
    def settled(self) -> bool:
        return self.basis in ("detected", "declared")


_BUILTIN = frozenset(ENCODINGS)


def declared_kind(codec: str) -> str:
    """The kind text declared as (usable, canonical) ``codec`` is written in: UTF-16
    without a BOM is a BOM-less kind (a BOM is found before any declaration), UTF-8 with
    a signature is plain UTF-8, any other codec is its own kind."""
    if codec in ("utf-16", "utf-16-le"):
        return "utf-16-le"
    if codec == "utf-8-sig":
        return "utf-8"
    return codec


def _declared_kind(codec: str, sample: bytes, complete: bool) -> str:
    """`declared_kind`, except that declared UTF-8 that is not is the lossy kind."""
    kind = declared_kind(codec)
    if kind == "utf-8" and not _decodes(sample, "utf-8", complete):
        return "utf-8-lossy"
    return kind


def _reproduces(sample: bytes, encoding: str, complete: bool) -> bool:
    """Decoding ``sample`` and encoding it back gives the same bytes (no codec with two
    spellings of one character, as cp932 has, may rewrite bytes an edit did not touch)."""
    if encoding in _BUILTIN:
        return True
    if not complete:
        sample = _charset.boundary_cut(sample)
    codec = codec_of(encoding)
    try:
        return sample.decode(codec, "surrogateescape").encode(codec, "surrogateescape") == sample
    except UnicodeError:
        return False


def _use_declaration(
    name: str, origin: str, sample: bytes, complete: bool, *, own: bool = False
) -> tuple[Detection | None, str | None]:
    """The detection a declaration gives, or ``(None, why it is passed over)``. An
    ``own`` declaration (in the file, readable as ASCII) cannot be UTF-16."""
    codec, why = _charset.usable_codec(name)
    if codec is None:
        return None, f"{origin} names {why}; ignored"
    if own and codec.startswith("utf-16"):
        return None, f"{origin} names {name}, which a file readable as ASCII is not; ignored"
    kind = _declared_kind(codec, sample, complete)
    if not _reproduces(sample, kind, complete):
        return None, f"{origin} names {name}, which does not reproduce this file's bytes; ignored"
    return Detection(kind, "declared", origin), None


def detect(
    sample: bytes, *, complete: bool = True, declared: Declaration | None = None
) -> Detection:
    """The encoding of a file whose first bytes are ``sample`` (at most `DETECT_BYTES`
    matter), and how sure that is.

    ``complete`` says the sample is the whole file; otherwise a sample cut in the
    middle of a character is tolerated. First hit wins: a BOM; ``declared`` (the
    ``[files] encodings`` entry for the path, or the encoding read_file was given for
    this version); the file's own coding line or XML declaration; BOM-less UTF-16;
    strict UTF-8; mostly-UTF-8 with some bad bytes (lossy, unknown); the first of
    ``declared.fallbacks`` that decodes it (declared); a clear charset-normalizer guess;
    else lossy UTF-8 (unknown).
    """
    complete = complete and len(sample) <= DETECT_BYTES
    sample = sample[:DETECT_BYTES]
    for kind, bom in BOMS.items():
        if sample.startswith(bom):
            return Detection(kind)
    notes = []
    if declared is not None and declared.codec:
        found, note = _use_declaration(declared.codec, declared.origin, sample, complete)
        if found is not None:
            return found
        notes.append(note)
    own = _charset.declaration(sample)
    if own is not None:
        where = "its XML declaration" if sample.startswith(b"<?xml") else "its coding line"
        found, note = _use_declaration(own, where, sample, complete, own=True)
        if found is not None:
            return attrs.evolve(found, note="; ".join(n for n in notes if n) or None)
        notes.append(note)
    note = "; ".join(n for n in notes if n) or None
    guess16 = _utf16_guess(sample)
    if guess16 is not None:
        body = sample if complete else sample[: len(sample) // 2 * 2]
        if _decodes(body, CODECS[guess16], complete):
            return Detection(guess16, note=note)
    if _decodes(sample, "utf-8", complete):
        return Detection("utf-8", note=note)
    if b"\x00" in sample[:PROBE_BYTES] or _charset.looks_like_damaged_utf8(sample):
        return Detection("utf-8-lossy", "unknown", note=note)
    for name in declared.fallbacks if declared is not None else ():
        fallback = _fallback(name, sample, complete)
        if fallback is not None:
            return Detection(fallback, "declared", FALLBACK_ORIGIN, note)
    codec = _charset.guess(sample, complete=complete)
    if codec is not None and _reproduces(sample, codec, complete):
        return Detection(codec, "guessed", note=note)
    return Detection("utf-8-lossy", "unknown", note=note)


#: The origin of an encoding settled by the user's fallback list.
FALLBACK_ORIGIN = "[files] fallback_encodings"
#: The origin of an encoding the model settled with read_file's ``encoding`` argument.
CHOSEN_ORIGIN = "read_file's encoding argument"


def _fallback(name: str, sample: bytes, complete: bool) -> str | None:
    """The kind fallback encoding ``name`` reads ``sample`` as, when it decodes it strictly
    and writes it back byte for byte (never UTF-16: that is found by its bytes)."""
    codec, _ = _charset.usable_codec(name)
    if codec is None or codec.startswith("utf-16"):
        return None
    kind = declared_kind(codec)
    body = sample if complete else _charset.boundary_cut(sample)
    if not _decodes(body, codec_of(kind), True) or not _reproduces(sample, kind, complete):
        return None
    return kind


def undecodable_at(sample: bytes, encoding: str, *, complete: bool = True) -> int | None:
    """Where ``sample`` stops being text in ``encoding``: the offset of the first byte it
    cannot decode, or of the first that does not come back when the text is encoded again;
    ``None`` when it reads and writes back byte for byte (a sample that is not
    ``complete`` may end in the middle of a character)."""
    codec = codec_of(encoding)
    body = sample if complete else _charset.boundary_cut(sample)
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        return exc.start
    except LookupError:
        return 0
    try:
        again = text.encode(codec)
    except UnicodeEncodeError:
        again = b""
    if again == body:
        return None
    return next(
        (i for i, (a, b) in enumerate(zip(again, body, strict=False)) if a != b),
        min(len(again), len(body)),
    )


def detect_encoding(
    sample: bytes, *, complete: bool = True, declared: Declaration | None = None
) -> str:
    """The encoding kind `detect` finds (see there)."""
    return detect(sample, complete=complete, declared=declared).encoding


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
        data = data[len(bom) :]
    return data.decode(codec_of(encoding), "surrogateescape")


#: Kinds whose text never holds escapes of the file's own bytes (they decode strictly).
_STRICT = frozenset(
    {"utf-8", "utf-8-bom", "utf-16-le-bom", "utf-16-be-bom", "utf-16-le", "utf-16-be"}
)


def encode_text(text: str, encoding: str, *, bom: bool = True) -> bytes:
    """Encode ``text`` in ``encoding``, restoring its BOM; any text the model sends encodes
    (what the codec cannot write becomes U+FFFD, or ``?``: the files tools refuse such
    text before it gets here, see `unencodable`)."""
    codec = codec_of(encoding)
    handler = "callgate-lenient" if encoding in _STRICT else "callgate-escape"
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def display(text: str) -> str:
    """``text`` as the model reads it: undecodable bytes (and any other lone surrogate)
    shown as U+FFFD, so whatever is shown is valid UTF-8."""
    if not _maybe_escapes(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def unencodable(text: str, encoding: str) -> str | None:
    """The first character of ``text`` that ``encoding`` cannot write, or ``None``.

    A lone surrogate counts (the model cannot mean a file's undecodable byte: it
    only ever saw U+FFFD).
    """
    try:
        text.encode(codec_of(encoding))
    except UnicodeEncodeError as exc:
        return exc.object[exc.start]
    return None


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

    ``encoding`` is one of `ENCODINGS`, or the codec of a declared or guessed
    encoding (``cp1251``); ``text`` has no BOM; undecodable bytes are surrogate
    escapes. ``basis``, ``origin`` and ``note`` are the `Detection`'s: how sure the
    encoding is, which declaration set it, why a declaration was passed over.
    """

    text: str
    encoding: str
    basis: Basis = "detected"
    origin: str | None = None
    note: str | None = None

    @property
    def style(self) -> LineStyle:
        return line_style(self.text)

    @property
    def lossy(self) -> bool:
        return self.encoding == "utf-8-lossy"

    @property
    def settled(self) -> bool:
        """The encoding is known (detected or declared), not guessed or unknown."""
        return self.basis in ("detected", "declared")

    def encode(self, text: str | None = None) -> bytes:
        """``text`` (default: this text) in this kind, BOM and byte order included."""
        return encode_text(self.text if text is None else text, self.encoding)

    def adapt(self, text: str) -> str:
        """New text for this file's endings: in a ``crlf`` file, LF-only text becomes CRLF."""
        if self.style == "crlf" and "\r" not in text:
            return to_crlf(text)
        return text


def decode_text(data: bytes, declared: Declaration | None = None) -> DecodedText:
    """Detect the encoding of a whole file and decode it (see `detect`); ``declared`` is
    the ``[files] encodings`` entry for its path, if any.

    One pass for the common case: a strict UTF-8 decode both proves the kind and
    yields the text. A declared or guessed codec must reproduce the whole file when
    it encodes the text back, or the file is read as lossy UTF-8 instead.
    """
    if (
        (declared is None or not declared.codec)
        and not data.startswith(tuple(BOMS.values()))
        and _utf16_guess(data) is None
        and _charset.declaration(data) is None
    ):
        try:
            return DecodedText(data.decode("utf-8"), "utf-8")
        except UnicodeDecodeError:
            pass
    found = detect(data, complete=True, declared=declared)
    text = decode_bytes(data, found.encoding)
    if (
        len(data) > DETECT_BYTES
        and found.encoding not in _BUILTIN
        and text.encode(codec_of(found.encoding), "surrogateescape") != data
    ):
        note = (
            f"{found.encoding} does not reproduce this file's bytes past its first "
            f"{DETECT_BYTES >> 10} KiB; read as UTF-8 instead"
        )
        return DecodedText(decode_bytes(data, "utf-8-lossy"), "utf-8-lossy", "unknown", note=note)
    return DecodedText(text, found.encoding, found.basis, found.origin, found.note)


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (so it is not Unicode text)."""
    if text.isascii():  # O(1): CPython keeps the flag
        return False
    try:  # surrogates are the only code points UTF-32 cannot encode; ~2 ms per million
        text.encode("utf-32")
    except UnicodeEncodeError:
        return True
    return False
