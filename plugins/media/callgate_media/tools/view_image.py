"""The ``view_image`` tool: schema, description, execute, and the checks before it.

The file is judged by ``stat`` before a byte is read, by its first bytes (never
its name), then by Pillow's header probe before anything is decoded. The image
block carries the file's exact bytes; only the text line enters the result store.
"""

from __future__ import annotations

import inspect
import os
import stat as stat_mod
from collections.abc import Callable
from typing import Any

import anyio
import attrs
from callgate import (
    ToolContext,
    ToolError,
    ToolResult,
)
from callgate.paths import READ_FLAGS, ResolvedPath, Workspace
from callgate.results import ImageBlock, TextBlock

from .._probe import Corrupt, HeaderMismatch, TooManyPixels, probe
from .._sniff import ImageType, detect_other, extension_note, sniff
from .specs import MAX_BYTES, MAX_PIXELS

_SNIFF_BYTES = 4096

# --- availability ---------------------------------------------------------------------


def describer_for(session: Any) -> Any:
    """The integrator's image describer for this session (firstresult hook), or ``None``."""
    return session.host.pm.hook.callgate_image_describer(session=session)


def vision(session: Any) -> bool:
    return bool(session.host.config("media").get("vision", True))


def available(session: Any) -> bool:
    """With vision the tool is always there; without it, only when a describer answers."""
    return vision(session) or describer_for(session) is not None


# --- execute ---------------------------------------------------------------------------


@attrs.frozen
class LoadedImage:
    display: str
    kind: ImageType
    data: bytes
    width: int
    height: int
    frames: int

    @property
    def line(self) -> str:
        text = (f"Image {self.display}: {self.kind.name}, {self.width} × {self.height} px, "
                f"{len(self.data)} bytes")
        if self.frames > 1:
            text += f", {self.frames} frames"
        return text + extension_note(self.display, self.kind)

    @property
    def meta(self) -> dict[str, Any]:
        return {"path": self.display, "media_type": self.kind.media_type, "width": self.width,
                "height": self.height, "bytes": len(self.data), "frames": self.frames}


async def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    image = await anyio.to_thread.run_sync(load, ctx.workspace, args["path"], ctx.files.denied)
    block = ImageBlock(image.kind.media_type, image.data)
    if vision(ctx.session):
        return ToolResult(content=[TextBlock(image.line), block], meta=image.meta)
    describer = describer_for(ctx.session)
    if describer is None:
        raise ToolError("unavailable", "view_image: this model has no vision and no image "
                        "describer is configured; describe the image another way",
                        "unavailable:view_image")
    try:
        text = describer.describe(block, image.display)
        if inspect.isawaitable(text):
            text = await text
    except ToolError:
        raise
    except Exception as exc:
        raise ToolError("tool_error", f"cannot describe image {image.display}: "
                        f"{str(exc)[:200] or type(exc).__name__}", "IMAGE_DESCRIBE") from None
    return ToolResult.ok(f"{image.line}\nDescription: {str(text).strip()}",
                         {**image.meta, "described": True})


def load(workspace: Workspace, path: str,
         denied: Callable[[ResolvedPath], bool] | None = None) -> LoadedImage:
    """Resolve, stat, read (at most the limit + 1 bytes), sniff and probe one image.

    Every system call is beneath the held workspace root (race-free); ``denied`` is the
    read deny list (a denied path is answered as a missing one).
    """
    resolved = workspace.resolve(path)
    shown = resolved.display
    missing = ToolError("not_found", f"file not found: {shown}; check the path (ls or glob "
                        "list the workspace)", "IMAGE_NOT_FOUND")
    if denied is not None and denied(resolved):
        raise missing
    try:
        st = resolved.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise missing from None
    except OSError as exc:
        raise _io_error(shown, exc) from None
    _check_stat(shown, st)
    flags = READ_FLAGS | getattr(os, "O_BINARY", 0)
    try:
        fd = resolved.open(flags)
    except FileNotFoundError:
        raise ToolError("not_found", f"file not found: {shown}", "IMAGE_NOT_FOUND") from None
    except OSError as exc:
        raise _io_error(shown, exc) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())  # the file actually opened (it may have been swapped)
        _check_stat(shown, st)
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise _too_large(max(len(data), st.st_size))
    if not data:
        raise _empty(shown)
    kind = sniff(data[:16])
    if kind is None:
        raise ToolError("tool_error", f"unsupported image format: {shown} is not a PNG, JPEG, "
                        f"GIF or WebP image (detected: {detect_other(data[:_SNIFF_BYTES])})",
                        "IMAGE_FORMAT")
    try:
        found = probe(data, kind, MAX_PIXELS)
    except TooManyPixels as exc:
        raise ToolError("tool_error", f"image has too many pixels: {exc.width} × {exc.height} "
                        f"= {exc.width * exc.height:,}; the limit is {MAX_PIXELS:,}",
                        "IMAGE_TOO_MANY_PIXELS") from None
    except HeaderMismatch as exc:
        raise ToolError("tool_error", f"the image's content is {kind.name} but its header "
                        f"parses as {exc.parsed}", "IMAGE_HEADER_MISMATCH") from None
    except Corrupt as exc:
        raise ToolError("tool_error", f"cannot read image: {shown} is a corrupt or truncated "
                        f"{kind.name} ({exc})", "IMAGE_CORRUPT") from None
    return LoadedImage(shown, kind, data, found.width, found.height, found.frames)


def _check_stat(shown: str, st: os.stat_result) -> None:
    if stat_mod.S_ISDIR(st.st_mode):
        raise ToolError("tool_error", f"{shown} is a directory; view_image takes an image "
                        "file", "IMAGE_IS_DIRECTORY")
    if not stat_mod.S_ISREG(st.st_mode):
        raise ToolError("tool_error", f"{shown} is not a regular file", "IMAGE_NOT_REGULAR")
    if st.st_size == 0:
        raise _empty(shown)
    if st.st_size > MAX_BYTES:
        raise _too_large(st.st_size)


def _empty(shown: str) -> ToolError:
    return ToolError("tool_error", f"file is empty: {shown}", "IMAGE_EMPTY")


def _too_large(size: int) -> ToolError:
    return ToolError("tool_error", f"image is too large: {size} bytes; the limit is 3 MiB "
                     f"({MAX_BYTES:,} bytes)", "IMAGE_TOO_LARGE")


def _io_error(shown: str, exc: OSError) -> ToolError:
    return ToolError("tool_error", f"cannot read image: {shown}: {exc.strerror or exc}",
                     "IMAGE_IO")
