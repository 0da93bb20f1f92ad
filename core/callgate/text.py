"""Text as file tools read and write it: encodings, BOMs, line endings, display forms.

`decode_text` settles a file's encoding (a `Declaration` from ``[files] encodings``,
or the encoding the model gave read_file for the version (`CHOSEN_ORIGIN`), or the
file's own coding line, else detection: BOMs, UTF-8, UTF-16, the user's fallback list
(`FALLBACK_ORIGIN`), a guess among legacy encodings, else UTF-8 with undecodable bytes
escaped; `detect` says on what basis) and keeps what is needed to write the text back byte-for-byte
(`DecodedText.encode`);
`encode_text` writes in a named encoding. `display`/`display_line(s)` show
control characters the way every file tool shows them; `split_lines`,
`line_style` and `to_crlf` keep a file's line endings.
"""

from ._text.charset import declaration as coding_declaration
from ._text.charset import usable_codec
from ._text.textio import (
    CHOSEN_ORIGIN,
    DETECT_BYTES,
    ENCODINGS,
    FALLBACK_ORIGIN,
    Declaration,
    DecodedText,
    Detection,
    bom_of,
    codec_of,
    declared_kind,
    decode_bytes,
    decode_text,
    detect,
    detect_encoding,
    display,
    display_line,
    display_lines,
    encode_text,
    has_escapes,
    is_binary,
    line_style,
    lone_surrogate,
    newline_bytes,
    split_lines,
    to_crlf,
    undecodable_at,
    unencodable,
    unit_of,
)

__all__ = [
    "CHOSEN_ORIGIN",
    "DETECT_BYTES",
    "ENCODINGS",
    "FALLBACK_ORIGIN",
    "Declaration",
    "DecodedText",
    "Detection",
    "bom_of",
    "codec_of",
    "coding_declaration",
    "declared_kind",
    "decode_bytes",
    "decode_text",
    "detect",
    "detect_encoding",
    "display",
    "display_line",
    "display_lines",
    "encode_text",
    "has_escapes",
    "is_binary",
    "line_style",
    "lone_surrogate",
    "newline_bytes",
    "split_lines",
    "to_crlf",
    "undecodable_at",
    "unencodable",
    "unit_of",
    "usable_codec",
]
