"""Pillow's view of an image held in memory: format, size and frames from the header,
then an integrity check, without decoding a single pixel before the size is known.

Each type's own Pillow opener is used instead of ``Image.open`` so that the
pixel limit here is always the one that refuses an oversized image: Pillow's
decompression-bomb check (in ``Image.open``) would otherwise refuse very large
ones first, with a message that does not give their dimensions.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any

import attrs

from ._sniff import ImageType


@functools.cache
def _openers() -> dict[str, Callable[[Any], Any]]:
    """Each type's Pillow opener; Pillow (~18 ms) is imported by the first probe."""
    from PIL import GifImagePlugin, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

    return {
        "PNG": PngImagePlugin.PngImageFile,
        "JPEG": JpegImagePlugin.jpeg_factory,
        "GIF": GifImagePlugin.GifImageFile,
        "WebP": WebPImagePlugin.WebPImageFile,
    }


_ANIMATED = frozenset({"PNG", "GIF", "WebP"})


@attrs.frozen
class Probe:
    width: int
    height: int
    frames: int


class Corrupt(Exception):
    """Pillow could not read the image; ``str(exc)`` is its reason."""


class HeaderMismatch(Exception):
    """The header parses as another format than the content's signature."""

    def __init__(self, parsed: str) -> None:
        super().__init__(parsed)
        self.parsed = parsed


class TooManyPixels(Exception):
    def __init__(self, width: int, height: int) -> None:
        super().__init__(f"{width} × {height}")
        self.width = width
        self.height = height


def _open(kind: ImageType, data: bytes) -> Any:
    opener = _openers()[kind.name]
    try:
        return opener(io.BytesIO(data))
    except Exception as exc:  # Pillow raises SyntaxError, OSError, ValueError, struct.error...
        raise Corrupt(_reason(exc)) from None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[:200]


def probe(data: bytes, kind: ImageType, max_pixels: int) -> Probe:
    """Format, size and frame count of ``data``; raises `Corrupt`, `HeaderMismatch` or
    `TooManyPixels` (the last before anything is decoded)."""
    image = _open(kind, data)
    if image.format not in kind.pillow_formats:
        raise HeaderMismatch(str(image.format))
    width, height = image.size
    if width * height > max_pixels:
        raise TooManyPixels(width, height)
    try:
        frames = int(getattr(image, "n_frames", 1)) if kind.name in _ANIMATED else 1
        _open(kind, data).verify()
        if kind.name in ("JPEG", "GIF"):
            # verify() checks little for these two: decode the stream once (a JPEG at
            # 1/8 scale) so that a truncated file is caught here, not by the provider
            full = _open(kind, data)
            if kind.name == "JPEG":
                full.draft(None, (max(1, width // 8), max(1, height // 8)))
            full.load()
    except Corrupt:
        raise
    except Exception as exc:
        raise Corrupt(_reason(exc)) from None
    return Probe(width, height, max(1, frames))
