"""``view_image`` as declared data: name, description, schema and flags, with its code named by
`callgate.deferred` (issue 38). Registering the plugin imports this module and neither the
image probe nor anyio; ``tools/view_image.py`` is imported by the first call (or the first
session that asks whether the tool is available)."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, ToolSpec, deferred

#: Fixed by the contract (not configurable).
MAX_BYTES = 3 * 1024 * 1024
MAX_PIXELS = 40_000_000


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 4096,
            "description": "Image file path, relative to the workspace root (or absolute "
                           "inside it).",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


DESCRIPTION = (
    "Look at a local PNG, JPEG, GIF or WebP image: the result shows the image itself (or, "
    "for a model without vision, a description from the configured image-understanding "
    "model) after a line with its type, size in pixels and bytes. Use it for screenshots, "
    "diagrams and other image files instead of read_file. The type is read from the file's "
    "content, not its extension. Limits: 3 MiB per file and 40 million pixels."
)


def spec(vision: bool) -> ToolSpec:
    """The tool; without ``[media] vision`` it exists only where the integrator can
    describe images (``callgate_image_describer``)."""
    return ToolSpec(
        name="view_image",
        description=DESCRIPTION,
        schema=SCHEMA,
        execute=deferred("callgate_media.tools.view_image:execute"),
        read_only=True,
        visibility="surface",
        surface_order=60,
        available=deferred("callgate_media.tools.view_image:available"),
        requires_hooks=() if vision else ("callgate_image_describer",),
        permission_subject=PermissionSubject("path", ("path",)),
    )
