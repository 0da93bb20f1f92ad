"""What a file's own bytes say about its encoding: a declaration in its first lines, and,
where it declares nothing and is not UTF-8, a guess (files.md §3, issue 26).

Two things live here and nothing else:

- **declarations** a file makes about itself: a PEP 263 magic comment
  (``# -*- coding: cp1251 -*-``, ``# vim: set fileencoding=latin-1``, ``# coding=…``)
  on its first or second line, or an XML declaration (``<?xml … encoding="…"?>``)
  on its first; and which codec names callgate can honour at all (`usable_codec`);
- **the guess** for a file that is neither UTF-8 nor declared, made by
  ``charset-normalizer`` over a list of common legacy encodings, and trusted only
  when it is clear: enough non-ASCII bytes, and one candidate ahead of every other
  that would show different text. A tie (4 bytes of cp1251 decode as well in GB18030,
  Big5 or cp1252) is no guess at all.
"""

from __future__ import annotations

import codecs
import functools
import re

#: Encodings a guess may choose from: the legacy code pages text files are really found
#: in. Narrower than charset-normalizer's default set on purpose: with every Mac and DOS
#: variant in play, a cp1251 file comes out as mac_cyrillic and cp866 as cp1125.
GUESS_CANDIDATES = (
    "cp1252",
    "cp1251",
    "cp1250",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "latin_1",
    "iso8859_2",
    "iso8859_5",
    "iso8859_7",
    "iso8859_9",
    "iso8859_15",
    "koi8_r",
    "koi8_u",
    "cp866",
    "cp437",
    "cp850",
    "cp874",
    "gb18030",
    "big5",
    "cp932",
    "shift_jis",
    "euc_jp",
    "cp949",
    "euc_kr",
)

#: Fewer non-ASCII bytes than this is too little text to tell encodings apart.
MIN_EVIDENCE = 8
#: The leading bytes a guess reads (charset-normalizer decodes all of them per candidate).
GUESS_BYTES = 64 << 10
#: Two candidates closer than this in charset-normalizer's mess and coherence ratios
#: are a tie.
TIE_CHAOS = 0.005
TIE_COHERENCE = 0.01

_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_XML = re.compile(rb"""^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][-\w.]*)["']""")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:#.*)?\r?$")
#: Stateful codecs: a byte's meaning depends on escapes before it, so text cannot be
#: spliced (and an edit could change bytes it did not touch).
_STATEFUL = ("utf_7", "hz", "iso2022")
_HIGH = bytes(range(0x80, 0x100))


def declaration(head: bytes) -> str | None:
    """The encoding name a file declares in its first lines, as written, or ``None``.

    PEP 263: the first line, or the second when the first is blank or a comment
    (a shebang). XML: a declaration that opens the file.
    """
    lines = head[:2048].split(b"\n", 2)
    first = lines[0]
    xml = _XML.match(first)
    if xml:
        return xml.group(1).decode("ascii")
    found = _CODING.match(first)
    if found is None and len(lines) > 1 and _BLANK_OR_COMMENT.match(first):
        found = _CODING.match(lines[1])
    return found.group(1).decode("ascii") if found else None


@functools.cache
def usable_codec(name: str) -> tuple[str | None, str]:
    """``(canonical codec name, "")`` if callgate can read and write text declared as
    ``name``, else ``(None, why not)``.

    Usable: a text codec Python knows that is stateless and ASCII-compatible (every
    ASCII byte is that character, so lines split on ``\\n`` and ASCII edits are safe);
    UTF-16 is usable too (its own code path). UTF-32 and EBCDIC are not.
    """
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None, f'"{name}", which is not an encoding Python knows'
    canonical = info.name
    if not getattr(info, "_is_text_encoding", True):
        return None, f'"{name}", which is not a text encoding'
    if canonical in ("utf-16", "utf-16-le", "utf-16-be"):
        return canonical, ""
    if canonical.replace("-", "_").startswith(_STATEFUL):
        return None, f'"{name}", a stateful encoding, which callgate cannot edit safely'
    ascii_bytes = bytes(range(128))
    try:
        same = (
            ascii_bytes.decode(canonical) == ascii_bytes.decode("ascii")
            and ascii_bytes.decode("ascii").encode(canonical) == ascii_bytes
        )
    except (UnicodeError, LookupError):
        same = False
    if not same:
        return None, f'"{name}", which is not ASCII-compatible and so cannot be edited safely'
    return canonical, ""


def boundary_cut(sample: bytes) -> bytes:
    """``sample`` up to and including its last byte below ``0x30`` (space, newline,
    common punctuation): never a trail byte in any candidate encoding, so a sample cut
    in the middle of a multi-byte character is not held against that encoding."""
    for i in range(len(sample) - 1, -1, -1):
        if sample[i] < 0x30:
            return sample[: i + 1]
    return sample


def looks_like_damaged_utf8(sample: bytes) -> bool:
    """True if ``sample`` is mostly UTF-8 with some bytes that are not: it holds valid
    multi-byte UTF-8 characters, at least as many as it holds undecodable bytes."""
    text = sample.decode("utf-8", "surrogateescape")
    wide = len(text) - len(text.encode("ascii", "ignore"))  # non-ASCII characters
    bad = len(text) - len(text.encode("utf-8", "ignore").decode())  # escaped bytes
    good = wide - bad
    return good > 0 and good >= bad


def guess(sample: bytes, *, complete: bool) -> str | None:
    """The codec a clear guess gives for non-UTF-8 text ``sample``, or ``None``.

    Only the first `GUESS_BYTES` count; ``complete`` says the sample is the whole
    file, otherwise it is cut back to a character boundary first. ``None`` when the
    sample has fewer than `MIN_EVIDENCE` non-ASCII bytes, when charset-normalizer
    finds no candidate, or when the best candidate ties with one that shows different
    text. The last few answers are kept: a read, its snapshot and the edit after it
    ask about the same bytes.
    """
    if len(sample) > GUESS_BYTES:
        sample, complete = sample[:GUESS_BYTES], False
    if not complete:
        sample = boundary_cut(sample)
    return _guess(sample)


@functools.lru_cache(maxsize=8)
def _guess(sample: bytes) -> str | None:
    if len(sample) - len(sample.translate(None, _HIGH)) < MIN_EVIDENCE:
        return None
    from charset_normalizer import from_bytes  # ~70 ms to import; only non-UTF-8 files pay

    matches = from_bytes(sample, cp_isolation=list(GUESS_CANDIDATES))
    best = matches.best()
    if best is None:
        return None
    shown = str(best)
    for other in matches:
        if other is best:
            continue
        tied = (
            abs(other.chaos - best.chaos) < TIE_CHAOS
            and abs(other.coherence - best.coherence) < TIE_COHERENCE
        )
        if tied and str(other) != shown:
            return None
    codec, _ = usable_codec(best.encoding)
    return codec
