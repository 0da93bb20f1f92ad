"""Real image files for view_image, made with Pillow once per test module."""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Callable
from typing import Any

import callgate_media
import pytest
from PIL import Image

LIMIT = 3 * 1024 * 1024


def encode(image: Image.Image, fmt: str, **kwargs: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **kwargs)
    return out.getvalue()


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pad_png(png: bytes, total: int) -> bytes:
    """``png`` grown to exactly ``total`` bytes by a private ancillary chunk before IEND."""
    iend = png.rindex(b"IEND") - 4
    filler = total - len(png) - 12
    assert filler >= 0
    return png[:iend] + png_chunk(b"paDd", b"\0" * filler) + png[iend:]


def with_ihdr_size(png: bytes, width: int, height: int) -> bytes:
    """A PNG whose header claims another size (how decompression bombs are built)."""
    start = 8
    length = struct.unpack(">I", png[start:start + 4])[0]
    data = bytearray(png[start + 8:start + 8 + length])
    data[0:8] = struct.pack(">II", width, height)
    return png[:start] + png_chunk(b"IHDR", bytes(data)) + png[start + 12 + length:]


@pytest.fixture(scope="session")
def images() -> dict[str, bytes]:
    """name → file bytes."""
    red = Image.new("RGB", (640, 480), (200, 20, 20))
    frames = [Image.new("RGB", (32, 32), (i * 20, 255 - i * 20, 0)) for i in range(12)]
    gif = io.BytesIO()
    frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:], duration=40, loop=0)
    png = encode(red, "PNG")
    webp_anim = io.BytesIO()
    frames[0].save(webp_anim, "WEBP", save_all=True, append_images=frames[1:5], duration=40)
    apng = io.BytesIO()
    frames[0].save(apng, "PNG", save_all=True, append_images=frames[1:3], duration=40)
    noise = Image.frombytes("RGB", (1100, 1000), os.urandom(1100 * 1000 * 3))
    bmp = encode(Image.new("RGB", (8, 8)), "BMP")
    return {
        "png": png,
        "jpeg": encode(red, "JPEG", quality=80),
        "gif": encode(Image.new("RGB", (64, 48), (0, 90, 200)), "GIF"),
        "webp": encode(red, "WEBP", quality=70),
        "animated_gif": gif.getvalue(),
        "animated_webp": webp_anim.getvalue(),
        "apng": apng.getvalue(),
        "png_42mp": encode(Image.new("1", (7000, 6000), 1), "PNG"),
        "png_40mp": encode(Image.new("1", (8000, 5000), 1), "PNG"),
        "png_claims_200mp": with_ihdr_size(png, 20000, 10000),
        "noise_png": encode(noise, "PNG", compress_level=1),
        "png_at_limit": pad_png(png, LIMIT),
        "png_over_limit": pad_png(png, LIMIT + 1),
        "png_half": png[: len(png) // 2],
        "svg": b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="4" '
               b'height="4"><rect width="4" height="4"/></svg>\n',
        "bmp": bmp,
        "tiff": encode(Image.new("RGB", (8, 8)), "TIFF"),
        "pdf": b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n",
        "heic": b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 32,
        "text": b"not an image at all\n",
        "unknown": b"\x00\x01\x02\x03\xfe\xff" * 10,
    }


@pytest.fixture
def media(callgate_session: Callable[..., Any], images: dict[str, bytes]
          ) -> Callable[..., Any]:
    """``media(files={"a.png": "png"}, ...)``: a session with the media plugin and those
    fixtures (by name) in its workspace."""

    def make(files: dict[str, str] | None = None, plugins: tuple[Any, ...] = (),
             **kwargs: Any) -> Any:
        content = {path: images[name] for path, name in (files or {}).items()}
        return callgate_session(plugins=[callgate_media, *plugins], files=content, **kwargs)

    return make
