"""Writing text into a file whose encoding is in question (issue 26).

A file read as UTF-8 (or UTF-16, through a BOM) or in a declared encoding has a
settled encoding: new text is written in it, or refused when it has characters that
encoding cannot write (``FS_UNENCODABLE``). Declared also covers the encoding the model
gave read_file for the version it read and the user's ``[files] fallback_encodings``
(issue 36; `choice_conflict` says when the model may not choose). A file that is not
UTF-8 and declares nothing is read by a guess (charset-normalizer) or lossily (bad bytes
as U+FFFD);
writing non-ASCII text into it would turn a guess into bytes, so edits that bring in
non-ASCII text are refused (``FS_ENCODING_UNSETTLED``) with the ways to settle the
question. ASCII is safe either way: every encoding a file can be guessed in writes
ASCII as ASCII. ``write_file`` replaces the whole content, so it needs no guess: it
writes an unsettled file as UTF-8 and says so (`write_encoding`). An edit may not
leave a coding line at odds with the bytes (``FS_ENCODING_DECLARATION``).
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Iterable

from callgate import ToolError
from callgate.files import SourceFile
from callgate.text import (
    CHOSEN_ORIGIN,
    FALLBACK_ORIGIN,
    Declaration,
    DecodedText,
    Detection,
    codec_of,
    coding_declaration,
    declared_kind,
    display,
    has_escapes,
    undecodable_at,
    unencodable,
    usable_codec,
)

from ._common import fail

#: The first characters of a text that hold its coding line (two lines, PEP 263).
DECLARATION_CHARS = 2048
#: The origin prefix of a ``[files] encodings`` declaration (the user's; it outranks a
#: coding line, which the fallback list and the model's choice do not)
USER_DECLARED = "[files] encodings"
OWN = ("its coding line", "its XML declaration")


def _name(encoding: str) -> str:
    """An encoding kind as people write it: ``utf-8-lossy`` is UTF-8."""
    return "utf-8" if encoding == "utf-8-lossy" else encoding


def settle_hint(p: str, encoding: str | None) -> str:
    """The ways to settle a file's encoding, for a refusal."""
    enc = encoding or "<encoding>"
    return (f'settle it first: if you know its encoding, read it again with read_file and '
            f'encoding="{enc}" (that version is then read, edited and written in it), or add '
            f'a coding line ("# -*- coding: {enc} -*-" as line 1 or 2, where a # comment is '
            "allowed; adding it is an ASCII edit), or replace the whole file with write_file, "
            f'which writes it as UTF-8 (the user may also declare it: [files] encodings = '
            f'{{"{p}" = "{enc}"}} in their config)')


def _describe(ch: str) -> str:
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} (a lone surrogate)"
    name = unicodedata.name(ch, "")
    return f'"{ch}" (U+{code:04X}{" " + name if name else ""})'


def _sample(texts: Iterable[str]) -> str:
    """The first non-ASCII run of the new text, at most 20 characters, for a message."""
    for text in texts:
        for i, ch in enumerate(text):
            if not ch.isascii():
                j = i
                while j < len(text) and not text[j].isascii() and j - i < 20:
                    j += 1
                return display(text[i:j])
    return ""


def check_inserted(source: SourceFile, inserted: Iterable[str], where: str = "") -> None:
    """Refuse (nothing is written) new text the file's encoding cannot take safely.

    ``inserted`` is what the change brings in (`Edited.inserted`); ``where`` starts the
    message (multi_edit's ``edit 2 of 3: ``). Unsettled file:
    any non-ASCII character is refused. Settled file: a character its encoding cannot
    write is refused (a lone surrogate too: in UTF-8 it would become U+FFFD).
    """
    texts = [t for t in inserted if not t.isascii()]
    if not texts:
        return
    decoded = source.decoded
    assert decoded is not None
    p = source.display
    if not decoded.settled:
        if decoded.basis == "guessed":
            question = (f"{p} is not UTF-8 and declares no encoding; it reads as "
                        f"{decoded.encoding}, but that is only a guess")
        else:
            question = (f"{p} is not valid UTF-8 and declares no encoding, and its encoding "
                        "could not be told (read_file shows its undecodable bytes as U+FFFD)")
        guess = decoded.encoding if decoded.basis == "guessed" else None
        raise fail("FS_ENCODING_UNSETTLED", f"{where}{question}. The new text has non-ASCII "
                   f'characters ("{_sample(texts)}"), and writing them in an encoding nobody '
                   f"confirmed could corrupt the file, so nothing was written; "
                   f"{settle_hint(p, guess)}")
    how = _how(decoded)
    for text in texts:
        bad = unencodable(text, decoded.encoding)
        if bad is not None:
            raise unencodable_error(p, decoded.encoding, how, bad, where)


def _how(decoded: DecodedText) -> str:
    return f"declared by {decoded.origin}" if decoded.basis == "declared" and decoded.origin \
        else "as read"


def unencodable_error(p: str, encoding: str, how: str, bad: str, where: str = "") -> ToolError:
    return fail("FS_UNENCODABLE", f"{where}{p} is {_name(encoding)} ({how}), which cannot encode "
                f"{_describe(bad)} in the new text, so nothing was written; use characters it "
                "has (or an escape the file's language understands), or declare an encoding "
                "that has them")


def _declares(head: str) -> str | None:
    """The canonical codec the first lines of ``head`` declare, ``""`` for a name
    callgate cannot use, ``None`` for no declaration."""
    name = coding_declaration(head[:DECLARATION_CHARS].encode("ascii", "replace"))
    if name is None:
        return None
    codec, _ = usable_codec(name)
    return codec or ""


def _same_codec(a: str, b: str) -> bool:
    def canon(name: str) -> str:
        name = codecs.lookup(codec_of(name)).name
        return "utf-16" if name.startswith("utf-16") else name
    return canon(a) == canon(b)


def check_declaration(source: SourceFile, head: str | None) -> None:
    """Refuse an edit that leaves the file's coding line at odds with its bytes.

    ``head`` is the start of the new text (``None``: the change does not touch it). A
    file read by its own coding line must keep declaring that encoding; a settled
    file with non-ASCII bytes must not gain a declaration of another one. A
    ``[files] encodings`` entry or a BOM outranks coding lines, so then nothing is
    checked. To convert a file, write_file rewrites it whole.
    """
    decoded = source.decoded
    if head is None or decoded is None:
        return
    origin = decoded.origin or ""
    if origin.startswith(USER_DECLARED) or decoded.encoding.endswith("-bom"):
        return
    now = _declares(head)
    p = source.display
    enc = _name(decoded.encoding)
    if origin in OWN and not (now and _same_codec(now, decoded.encoding)):
        what = "declare nothing" if now is None else \
            f"declare {now}" if now else "declare an encoding callgate cannot use"
        raise fail("FS_ENCODING_DECLARATION", f"{p} is {enc}, as {origin} says; this edit "
                   f"would make it {what} while its bytes stay {enc}, so nothing was "
                   "written; keep the declaration on line 1 or 2, or rewrite the whole file "
                   "with write_file to change its encoding")
    if origin not in OWN and now and decoded.settled and not source.data.isascii() and \
            not _same_codec(now, decoded.encoding):
        raise fail("FS_ENCODING_DECLARATION", f"{p} is {enc}, but this edit would declare it "
                   f"{now}, which would misread its non-ASCII bytes, so nothing was written; "
                   "rewrite the whole file with write_file to change its encoding")


#: Candidates read_file names for a file whose encoding it could not tell: common legacy
#: encodings, multi-byte first (a single-byte code page decodes almost any bytes).
CANDIDATES = ("gb18030", "big5", "shift_jis", "euc_kr", "cp1252", "cp1251")


def read_note(found: Detection, p: str, sample: bytes = b"", complete: bool = True
              ) -> str | None:
    """What read_file says about a file's encoding, or ``None`` when it is plain.

    Never a silent guess: a guessed or unknown encoding says so, and how to settle it
    (read_file with ``encoding``); an unknown one names the candidates ``sample`` reads
    in without an error, for the model to try (only the text shows which is right).
    """
    settle = ("a coding line or the user's [files] encodings also settle it; write_file of "
              "the whole file makes it UTF-8")
    notes = []
    if found.note:
        notes.append(f"[{found.note}]")
    if found.basis == "guessed":
        notes.append(f"[{p} is not UTF-8 and declares no encoding: shown as {found.encoding}, "
                     "a guess; edits that add non-ASCII text are refused until the encoding "
                     f'is settled: read it again with encoding="{found.encoding}" if the text '
                     "is right (or name the encoding that is), which settles it for this "
                     f"version ({settle})]")
    elif found.basis == "unknown":
        fits = [c for c in CANDIDATES if undecodable_at(sample, c, complete=complete) is None]
        tries = (f"; it reads without an error as {', '.join(fits)}, and the text would show "
                 "which, if any, is right") if sample and fits else ""
        notes.append(f"[{p} is not valid UTF-8 and its encoding could not be told (its "
                     f"undecodable bytes show as U+FFFD){tries}: if you know its encoding, read "
                     'it again with encoding="<name>", which settles it for this version; '
                     "until then edits that add non-ASCII text are refused "
                     f"({settle})]")
    elif found.origin == CHOSEN_ORIGIN:
        notes.append(f'[encoding: {found.encoding}, as read_file was asked (encoding="'
                     f'{found.encoding}"): edits of this version read and write it in '
                     f"{found.encoding}]")
    elif found.origin == FALLBACK_ORIGIN:
        notes.append(f"[encoding: {found.encoding}, the first of the user's [files] "
                     f"fallback_encodings that reads {p}]")
    elif found.basis == "declared" and _name(found.encoding) != "utf-8":
        notes.append(f"[encoding: {found.encoding}, declared by {found.origin}]")
    return "\n".join(notes) or None


def choice_conflict(natural: Detection, chosen: str, p: str) -> str | None:
    """Why the model may not read ``p`` as ``chosen``: its encoding is settled otherwise
    (its bytes, a BOM, the user's declaration or its own coding line), or ``None``. An
    encoding only guessed, unknown, or taken from the fallback list may be overruled;
    choosing the encoding it has already changes nothing."""
    if not natural.settled or natural.origin in (FALLBACK_ORIGIN, CHOSEN_ORIGIN):
        return None
    if _same_codec(chosen, natural.encoding):
        return None
    enc = _name(natural.encoding)
    if natural.encoding.endswith("-bom"):
        why = f"starts with a {enc.removesuffix('-bom').upper()} byte order mark"
    elif natural.basis == "detected" and natural.encoding == "utf-8":
        why = "is valid UTF-8"
    elif natural.basis == "detected":
        why = f"reads as {enc} by its bytes"
    elif natural.origin in OWN:
        why = f"declares {enc} in {natural.origin}"
    else:
        why = f"is declared {enc} by {natural.origin}"
    return (f"{p} {why}, so it is not read as {chosen}; nothing was recorded; read it "
            "without encoding")


def write_encoding(source: SourceFile, text: str) -> tuple[str, str | None]:
    """``(encoding, note)`` for write_file replacing ``source``'s whole content with
    ``text``, or a refusal.

    A BOM or a ``[files] encodings`` entry keeps the file's encoding; else the
    content's own coding line decides; else a file read by its coding line, or an
    unsettled one, is written as UTF-8 when the content is not ASCII (``note`` says
    so); else the file keeps its encoding. Content with U+FFFD over a file whose
    undecodable bytes read_file showed as U+FFFD is refused: it would replace those
    bytes for good.
    """
    decoded = source.decoded
    assert decoded is not None
    p = source.display
    if "\ufffd" in text and has_escapes(decoded.text):
        raise fail("FS_ENCODING_UNSETTLED", f"the content has U+FFFD, which read_file shows "
                   f"in place of the bytes of {p} it cannot decode; writing it would replace "
                   "those bytes for good, so nothing was written; change the rest with "
                   "edit_file (it keeps them), or write content without U+FFFD")
    origin = decoded.origin or ""
    encoding, how, note = decoded.encoding, _how(decoded), None
    if not (origin.startswith(USER_DECLARED) or decoded.encoding.endswith("-bom")):
        now = _declares(text)
        if now:
            encoding, how = declared_kind(now), "declared by its coding line"
        elif origin in OWN and not text.isascii():
            encoding, how = "utf-8", "as written"
            note = f"as UTF-8: the content no longer declares {decoded.encoding}"
        elif not decoded.settled and not text.isascii():
            encoding, how = "utf-8", "as written"
            was = f"was only guessed ({decoded.encoding})" if decoded.basis == "guessed" \
                else "was unknown"
            note = f"as UTF-8: its encoding {was}"
    bad = unencodable(text, encoding)
    if bad is not None:
        raise unencodable_error(p, encoding, how, bad)
    return encoding, note


def create_encoding(declared: Declaration | None, text: str, p: str) -> str:
    """The encoding a new file is created in: its ``[files] encodings`` entry, else the
    content's coding line, else UTF-8; a refusal if that encoding cannot write ``text``."""
    codec = usable_codec(declared.codec)[0] if declared is not None and declared.codec \
        else None
    how = f"declared by {declared.origin}" if codec and declared is not None else ""
    if codec is None:
        codec = _declares(text) or None
        how = "declared by its coding line"
    encoding = declared_kind(codec) if codec else "utf-8"
    bad = unencodable(text, encoding)
    if bad is not None:
        raise unencodable_error(p, encoding, how if codec else "a new file", bad)
    return encoding
