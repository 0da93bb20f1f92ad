"""What writing-a-tool.md says the file API does with missing files, directories and binary
content (issue 36.3: found by a newcomer crashing into it), through a tool's ``ctx.files``."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, hookimpl

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}},
          "required": ["path"], "additionalProperties": False}


class Copier:
    """``copy_back``: read a file as text and write it back unchanged, as a tool would."""

    __name__ = "copier"

    @staticmethod
    def _copy_back(ctx: Any, args: dict[str, Any]) -> str:
        text = ctx.files.read_text(args["path"])
        ctx.files.write_text(args["path"] + ".copy", text)
        return f"{len(text)} characters; NUL inside: {chr(0) in text}"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(name="copy_back", description="Copy a file.", schema=SCHEMA,
                              execute=self._copy_back))


def test_binary_content_round_trips_and_missing_files_are_not_found(callgate_session) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe"
    s = callgate_session(plugins=[Copier()], files={"img.png": data, "d/x": "x"})
    assert s.expect_ok("copy_back", {"path": "img.png"}) == "12 characters; NUL inside: True"
    # plain write_text writes UTF-8: the undecodable bytes (lone surrogates) become U+FFFD
    assert s.read("img.png.copy") == "\ufffdPNG\r\n\x1a\n\x00\x00\ufffd\ufffd".encode()
    s.expect_error("copy_back", {"path": "nope.txt"}, kind="not_found",
                   signature="FS_NOT_FOUND")
    s.expect_error("copy_back", {"path": "d"}, signature="FS_IS_DIRECTORY")
