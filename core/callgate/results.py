"""What a tool result holds: its content blocks and, for a failure, why (host.md §7).

`callgate.ToolResult` carries them: ``ToolResult.ok(text)`` and
``ToolResult.failure(kind, message)`` build the usual ones; a tool that shows an image
returns ``ToolResult(content=[TextBlock(...), ImageBlock(media_type, data)])``.
"""

from ._model.values import ERROR_KINDS, Block, ErrorInfo, ImageBlock, TextBlock

__all__ = ["ERROR_KINDS", "Block", "ErrorInfo", "ImageBlock", "TextBlock"]
