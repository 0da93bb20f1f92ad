"""callgate-media: the ``view_image`` tool (PNG, JPEG, GIF, WebP as native image blocks).

Installed, it registers through the ``callgate`` entry point (``media =
"callgate_media"``). ``[media] vision = false`` is for models without vision:
an integrator then implements the ``callgate_image_describer(session)`` hook
(see `callgate_media.hookspecs`) and view_image returns a description; without
a describer the tool is not available in that session::

    class Describer:
        async def describe(self, image, path):
            return await my_vision_model.describe(image.data, image.media_type)

    class Integrator:
        @callgate.hookimpl
        def callgate_image_describer(self, session):
            return Describer()
"""

from typing import TYPE_CHECKING, Any

from . import hookspecs
from .config import CONFIG_SCHEMA
from .plugin import callgate_register_tools
from .tools.specs import MAX_BYTES, MAX_PIXELS, SCHEMA

if TYPE_CHECKING:
    from .tools.view_image import load


def __getattr__(name: str) -> Any:
    """`load`, imported on first use: the probe is no part of registering (issue 38)."""
    if name != "load":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .tools.view_image import load

    return load

__all__ = [
    "CONFIG_SCHEMA",
    "MAX_BYTES",
    "MAX_PIXELS",
    "SCHEMA",
    "callgate_register_tools",
    "hookspecs",
    "load",
]
