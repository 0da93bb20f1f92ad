"""What an image file is, judged from its first bytes (never from its name)."""

from __future__ import annotations

import os

import attrs


@attrs.frozen
class ImageType:
    """One of the four types view_image accepts."""

    name: str  # what the model reads: PNG, JPEG, GIF, WebP
    media_type: str
    pillow_formats: frozenset[str]  # the format names Pillow may report for it


PNG = ImageType("PNG", "image/png", frozenset({"PNG"}))
JPEG = ImageType("JPEG", "image/jpeg", frozenset({"JPEG", "MPO"}))  # MPO: camera JPEGs
GIF = ImageType("GIF", "image/gif", frozenset({"GIF"}))
WEBP = ImageType("WebP", "image/webp", frozenset({"WEBP"}))
TYPES = (PNG, JPEG, GIF, WEBP)

#: The type each file extension claims (for the "extension says" note).
EXTENSIONS = {
    ".png": "PNG", ".apng": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG",
    ".jfif": "JPEG", ".gif": "GIF", ".webp": "WebP", ".bmp": "BMP", ".tif": "TIFF",
    ".tiff": "TIFF", ".svg": "SVG", ".heic": "HEIC", ".heif": "HEIC", ".avif": "AVIF",
    ".ico": "ICO", ".pdf": "PDF",
}

_HEIC_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1",
                          b"msf1"})


def sniff(head: bytes) -> ImageType | None:
    """The accepted type ``head`` starts with, or ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    return None


def detect_other(head: bytes) -> str:
    """What a refused file looks like: svg, bmp, tiff, pdf, heic, text or unknown."""
    if head.startswith(b"BM"):
        return "bmp"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head[4:8] == b"ftyp" and head[8:12] in _HEIC_BRANDS:
        return "heic"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    lowered = text[:4096].lower()
    if b"<svg" in lowered and (text.startswith(b"<") or lowered.startswith(b"<?xml")):
        return "svg"
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
            return "text"
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 3 and exc.reason == "unexpected end of data":
                return "text"  # a character cut by the sniff window
    return "unknown"


def extension_note(path: str, found: ImageType) -> str:
    """`` (content is PNG; extension says .jpg)`` when the name claims another type."""
    ext = os.path.splitext(path)[1].lower()
    claimed = EXTENSIONS.get(ext)
    if claimed is None or claimed == found.name:
        return ""
    return f" (content is {found.name}; extension says {ext})"
