"""view_image through the whole pipeline (web-and-media.md §2, §4 statements 20-29)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_providers as providers
import pytest
from callgate import hookimpl
from callgate.results import ImageBlock, TextBlock

from .conftest import LIMIT


def only_text(result: Any) -> str:
    assert all(isinstance(b, TextBlock) for b in result.content), result.content
    return result.text


def fingerprint(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mode, st.st_mtime_ns


# --- accepted images (statements 20-24) -------------------------------------------------


def test_png_is_returned_as_text_line_and_exact_image_block(media: Any,
                                                            images: dict[str, bytes]) -> None:
    """Statement 20."""
    s = media({"shots/a.png": "png"})
    before = fingerprint(s.path("shots/a.png"))
    r = s.call("view_image", {"path": "shots/a.png"})
    assert not r.is_error, r.text
    text, image = r.content
    assert isinstance(text, TextBlock) and isinstance(image, ImageBlock)
    assert text.text == f"Image shots/a.png: PNG, 640 × 480 px, {len(images['png'])} bytes"
    assert "PNG, 640 × 480 px" in text.text
    assert image.media_type == "image/png"
    assert image.data == images["png"]
    assert r.meta["width"] == 640 and r.meta["height"] == 480
    assert fingerprint(s.path("shots/a.png")) == before  # read-only: nothing changed


@pytest.mark.parametrize("name,file,media_type,kind", [
    ("jpeg", "photo.jpg", "image/jpeg", "JPEG"),
    ("gif", "anim.gif", "image/gif", "GIF"),
    ("webp", "pic.webp", "image/webp", "WebP"),
])
def test_each_accepted_type(media: Any, images: dict[str, bytes], name: str, file: str,
                            media_type: str, kind: str) -> None:
    """Statement 21."""
    s = media({file: name})
    r = s.call("view_image", {"path": file})
    assert not r.is_error, r.text
    [image] = r.images
    assert image.media_type == media_type and image.data == images[name]
    assert r.text.startswith(f"Image {file}: {kind}, ")
    assert "frames" not in r.text and "extension says" not in r.text


def test_animated_gif_counts_its_frames(media: Any) -> None:
    """Statement 21."""
    s = media({"spin.gif": "animated_gif"})
    r = s.call("view_image", {"path": "spin.gif"})
    assert r.text.endswith(", 12 frames"), r.text
    assert r.meta["frames"] == 12


@pytest.mark.parametrize("name,file,kind,frames", [
    ("animated_webp", "spin.webp", "WebP", 5), ("apng", "spin.png", "PNG", 3)])
def test_animated_webp_and_png_count_their_frames(media: Any, images: dict[str, bytes],
                                                  name: str, file: str, kind: str,
                                                  frames: int) -> None:
    s = media({file: name})
    r = s.call("view_image", {"path": file})
    assert r.text == (f"Image {file}: {kind}, 32 × 32 px, {len(images[name])} bytes, "
                      f"{frames} frames")
    assert r.images[0].data == images[name]


def test_type_comes_from_content_not_extension(media: Any, images: dict[str, bytes]) -> None:
    """Statement 22."""
    s = media({"shot.jpg": "png", "noext": "png", "pic.PNG": "png"})
    r = s.call("view_image", {"path": "shot.jpg"})
    assert r.images[0].media_type == "image/png"
    assert r.text == (f"Image shot.jpg: PNG, 640 × 480 px, {len(images['png'])} bytes "
                      "(content is PNG; extension says .jpg)")
    assert "extension says" not in s.call("view_image", {"path": "noext"}).text
    assert "extension says" not in s.call("view_image", {"path": "pic.PNG"}).text


def test_size_limit_is_exact(media: Any) -> None:
    """Statement 23: 3,145,729 bytes refused (a valid PNG); exactly 3,145,728 accepted."""
    s = media({"over.png": "png_over_limit", "at.png": "png_at_limit", "noise.png": "noise_png"})
    assert s.path("over.png").stat().st_size == LIMIT + 1
    r = s.call("view_image", {"path": "over.png"})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text == ("image is too large: 3145729 bytes; the limit is 3 MiB "
                      "(3,145,728 bytes)")
    noise = s.call("view_image", {"path": "noise.png"})
    assert noise.text.startswith("image is too large: ")
    ok = s.call("view_image", {"path": "at.png"})
    assert not ok.is_error, ok.text
    assert ok.text.endswith(", 3145728 bytes") and len(ok.images[0].data) == LIMIT


def test_pixel_limit(media: Any) -> None:
    """Statement 24: 42 MP refused before any decode; exactly 40 MP accepted."""
    s = media({"big.png": "png_42mp", "edge.png": "png_40mp"})
    r = s.call("view_image", {"path": "big.png"})
    assert r.is_error
    assert r.text == ("image has too many pixels: 7000 × 6000 = 42,000,000; the limit is "
                      "40,000,000")
    ok = s.call("view_image", {"path": "edge.png"})
    assert not ok.is_error, ok.text
    assert "PNG, 8000 × 5000 px" in ok.text


def test_pixel_limit_is_ours_even_past_pillows_bomb_limit(media: Any) -> None:
    """A header claiming 200 MP (beyond Pillow's own decompression-bomb error) still gets our
    message with its dimensions: nothing was decoded."""
    s = media({"bomb.png": "png_claims_200mp"})
    r = s.call("view_image", {"path": "bomb.png"})
    assert r.text == ("image has too many pixels: 20000 × 10000 = 200,000,000; the limit is "
                      "40,000,000")


# --- refused files (statements 25, 26) --------------------------------------------------


@pytest.mark.parametrize("name,detected", [
    ("svg", "svg"), ("bmp", "bmp"), ("tiff", "tiff"), ("pdf", "pdf"), ("heic", "heic"),
    ("text", "text"), ("unknown", "unknown"),
])
def test_unsupported_formats_are_named(media: Any, name: str, detected: str) -> None:
    """Statement 25."""
    s = media({f"file.{name}": name})
    r = s.call("view_image", {"path": f"file.{name}"})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text == (f"unsupported image format: file.{name} is not a PNG, JPEG, GIF or WebP "
                      f"image (detected: {detected})")
    assert r.images == []


def test_bmp_named_png_is_still_refused(media: Any) -> None:
    s = media({"fake.png": "bmp"})
    assert "(detected: bmp)" in s.call("view_image", {"path": "fake.png"}).text


def test_empty_file(media: Any) -> None:
    """Statement 25."""
    s = media()
    s.write("empty.png", b"")
    r = s.call("view_image", {"path": "empty.png"})
    assert r.is_error and r.text == "file is empty: empty.png"


def test_truncated_png_is_corrupt(media: Any) -> None:
    """Statement 26."""
    s = media({"half.png": "png_half"})
    r = s.call("view_image", {"path": "half.png"})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text.startswith("cannot read image: half.png is a corrupt or truncated PNG (")
    assert len(r.text.split(" PNG (", 1)[1]) <= 201


@pytest.mark.parametrize("name,kind", [("jpeg", "JPEG"), ("gif", "GIF"), ("webp", "WebP")])
def test_truncated_images_of_every_type_are_corrupt(media: Any, images: dict[str, bytes],
                                                    name: str, kind: str) -> None:
    s = media()
    s.write("cut.img", images[name][: len(images[name]) // 2])
    r = s.call("view_image", {"path": "cut.img"})
    assert r.text.startswith(f"cannot read image: cut.img is a corrupt or truncated {kind} ("), \
        r.text


def test_fake_image_with_only_a_signature_is_corrupt(media: Any) -> None:
    s = media()
    s.write("sig.png", b"\x89PNG\r\n\x1a\n" + b"garbage" * 20)
    r = s.call("view_image", {"path": "sig.png"})
    assert r.text.startswith("cannot read image: sig.png is a corrupt or truncated PNG")


def test_path_outside_the_workspace(media: Any, images: dict[str, bytes]) -> None:
    """Statement 26."""
    s = media()
    outside = s.workspace.parent / "outside.png"
    outside.write_bytes(images["png"])
    try:
        r = s.call("view_image", {"path": "../outside.png"})
        assert r.is_error and r.error.kind == "outside_workspace"
        assert r.error.signature == "FS_OUTSIDE_WORKSPACE"
        assert r.text.startswith("FS_OUTSIDE_WORKSPACE: ") and "outside the workspace" in r.text
        (s.workspace / "link.png").symlink_to(outside)
        r2 = s.call("view_image", {"path": "link.png"})
        assert r2.error.kind == "outside_workspace"
        r3 = s.call("view_image", {"path": str(outside)})
        assert r3.error.kind == "outside_workspace"
    finally:
        outside.unlink()


def test_symlink_inside_the_workspace_is_followed(media: Any) -> None:
    s = media({"real/a.png": "png"})
    (s.workspace / "alias.png").symlink_to(s.workspace / "real" / "a.png")
    r = s.call("view_image", {"path": "alias.png"})
    assert not r.is_error and r.text.startswith("Image alias.png: PNG")


def test_missing_file(media: Any) -> None:
    """Statement 26."""
    s = media()
    r = s.call("view_image", {"path": "nope.png"})
    assert r.is_error and r.error.kind == "not_found"
    assert r.text.startswith("file not found: nope.png")
    r2 = s.call("view_image", {"path": "nodir/nope.png"})
    assert r2.error.kind == "not_found"


def test_directory_and_fifo_are_refused_without_reading(media: Any) -> None:
    s = media()
    (s.workspace / "pics").mkdir()
    r = s.call("view_image", {"path": "pics"})
    assert r.is_error and r.text.startswith("pics is a directory")
    os.mkfifo(s.workspace / "pipe.png")
    r2 = s.call("view_image", {"path": "pipe.png"})  # would block forever if it were opened
    assert r2.is_error and r2.text == "pipe.png is not a regular file"


def test_bad_arguments_are_validation_errors(media: Any) -> None:
    s = media()
    assert s.call("view_image", {"path": ""}).error.kind == "invalid_arguments"
    assert s.call("view_image", {"path": "a.png", "x": 1}).error.kind == "invalid_arguments"
    assert s.call("view_image", {}).error.kind == "invalid_arguments"


# --- provider renderings (statement 27) ---------------------------------------------------


def test_every_provider_renders_the_image_natively(media: Any, images: dict[str, bytes]) -> None:
    """Statement 27."""
    s = media({"a.png": "png"})
    r = s.call("view_image", {"path": "a.png"})
    line = r.text

    anthropic = providers.render_result(r, "anthropic")
    assert anthropic["content"][0] == {"type": "text", "text": line}
    block = anthropic["content"][1]
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == images["png"]

    responses = providers.render_result(r, "openai-responses")
    assert responses["type"] == "function_call_output"
    text_item, image_item = responses["output"]
    assert text_item == {"type": "input_text", "text": line}
    assert image_item["type"] == "input_image"
    prefix = "data:image/png;base64,"
    assert image_item["image_url"].startswith(prefix)
    assert base64.b64decode(image_item["image_url"][len(prefix):]) == images["png"]

    chat = providers.render_result(r, "openai-chat")
    tool_message, user_message = chat
    assert tool_message["role"] == "tool" and tool_message["content"] == line
    assert user_message["role"] == "user"
    assert user_message["content"][0] == {"type": "text",
                                          "text": f"Image from tool call {r.call_id}:"}
    url = user_message["content"][1]["image_url"]["url"]
    assert user_message["content"][1]["type"] == "image_url" and url.startswith(prefix)
    assert base64.b64decode(url[len(prefix):]) == images["png"]

    mcp = providers.render_result(r, "mcp")
    assert mcp["content"][0] == {"type": "text", "text": line}
    assert mcp["content"][1]["type"] == "image" and mcp["content"][1]["mimeType"] == "image/png"
    assert base64.b64decode(mcp["content"][1]["data"]) == images["png"]

    gemini = providers.render_result(r, "gemini")
    response_part, inline = gemini["parts"]
    assert response_part["functionResponse"]["response"] == {"output": line}
    assert inline["inlineData"]["mimeType"] == "image/png"
    assert base64.b64decode(inline["inlineData"]["data"]) == images["png"]


# --- models without vision (statement 28) -----------------------------------------------------


class Describer:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    async def describe(self, image: ImageBlock, path: str) -> str:
        self.seen.append((path, image.media_type, len(image.data)))
        return "a red square"


class DescribingIntegrator:
    def __init__(self) -> None:
        self.describer = Describer()

    @hookimpl
    def callgate_image_describer(self, session: Any) -> Any:
        return self.describer


def test_without_vision_a_describer_answers(media: Any, images: dict[str, bytes]) -> None:
    """Statement 28, first half."""
    integrator = DescribingIntegrator()
    s = media({"a.png": "png"}, plugins=(integrator,), config={"media": {"vision": False}})
    r = s.call("view_image", {"path": "a.png"})
    assert not r.is_error, r.text
    assert r.images == []
    assert r.text == (f"Image a.png: PNG, 640 × 480 px, {len(images['png'])} bytes\n"
                      "Description: a red square")
    assert integrator.describer.seen == [("a.png", "image/png", len(images["png"]))]


def test_without_vision_or_describer_the_tool_is_unavailable(media: Any) -> None:
    """Statement 28, second half (surface, the session's tools, a direct call)."""
    s = media({"a.png": "png"}, config={"media": {"vision": False}})
    assert "view_image" not in [t["name"] for t in providers.surface(s.session)]
    assert "view_image" not in s.session.available_tools()
    r = s.call("view_image", {"path": "a.png"})
    assert r.is_error and r.error.kind == "unavailable"  # as through the proxy (36.6)
    with_vision = media({"a.png": "png"})
    assert "view_image" in [t["name"] for t in providers.surface(with_vision.session)]


def test_without_vision_or_describer_capability_list_leaves_it_out(media: Any) -> None:
    """Statement 28: ``list`` (use_capability) does not offer an unavailable view_image."""
    config = {"surface": {"hide": ["view_image"]}}
    shown = media({"a.png": "png"}, plugins=(callgate_capability,), config=config)
    listed = shown.call("use_capability", {"action": "list"}).text
    assert "view_image" in listed
    absent = media({"a.png": "png"}, plugins=(callgate_capability,),
                   config={**config, "media": {"vision": False}})
    assert "view_image" not in absent.call("use_capability", {"action": "list"}).text
    r = absent.call("use_capability", {"action": "call", "capability_id": "tool:view_image",
                                       "arguments": {"path": "a.png"}})
    assert r.is_error and r.error.kind == "unavailable"


# --- the result store (statement 29) ----------------------------------------------------------


def test_result_store_keeps_only_the_text_line(media: Any) -> None:
    """Statement 29 (the core paging API)."""
    s = media({"a.png": "png"})
    r = s.call("view_image", {"path": "a.png"})
    page = s.session.results.page(r.call_id)
    header, _, body = page.partition("\n")
    assert body == r.text
    assert '"complete": true' in header


def test_session_tool_result_pages_only_the_text_line(media: Any) -> None:
    """Statement 29 through use_capability ``session:tool_result``."""
    s = media({"a.png": "png"}, plugins=(callgate_capability,))
    r = s.call("view_image", {"path": "a.png"})
    paged = s.call("use_capability", {"action": "call", "capability_id": "session:tool_result",
                                      "arguments": {"tool_call_id": r.call_id}})
    assert not paged.is_error, paged.text
    assert only_text(paged).split("\n", 1)[1] == r.text


def test_image_bytes_do_not_count_against_the_text_limit(media: Any) -> None:
    s = media({"at.png": "png_at_limit"}, config={"results": {"max_chars": 1000}})
    r = s.call("view_image", {"path": "at.png"})
    assert not r.is_error and "truncated" not in r.text
    assert "truncated" not in r.meta and len(r.images[0].data) == LIMIT


def test_contract_flags(media: Any) -> None:
    s = media()
    spec = s.host.host.registry.get("view_image")
    assert spec.contract_read_only and spec.visibility == "surface"
    assert spec.permission_subject.kind == "path"
    assert spec.permission_subject.arguments == ("path",)


def test_permission_rules_match_the_workspace_relative_path(media: Any) -> None:
    s = media({"private/a.png": "png", "public/a.png": "png"},
              config={"permissions": {"deny": ["view_image(private/*)"]}})
    blocked = s.call("view_image", {"path": "private/a.png"})
    assert blocked.is_error and blocked.error.kind == "blocked"
    assert blocked.images == []
    assert not s.call("view_image", {"path": "public/a.png"}).is_error
