"""A small real MCP server with prompts, for the slash_command tests (a stdio child).

Prompts: ``greet {name*, style}`` (a user message built from its arguments) and
``summary`` (no arguments, two messages). ``--started FILE`` appends this process's
pid to FILE when it starts, so a test can prove a listing started nothing.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PROMPTS = [
    types.Prompt(
        name="greet",
        description="Greet someone in a style",
        arguments=[
            types.PromptArgument(name="name", description="who", required=True),
            types.PromptArgument(name="style", description="how", required=False),
        ],
    ),
    types.Prompt(name="summary", description="Summarize the changes", arguments=[]),
]


def _user(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


def build() -> Server[Any]:
    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=PROMPTS)

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        args = params.arguments or {}
        if params.name == "greet":
            style = args.get("style", "plainly")
            return types.GetPromptResult(
                description="a greeting", messages=[_user(f"Greet {args['name']} {style}.")]
            )
        return types.GetPromptResult(
            messages=[
                _user("Summarize the diff."),
                types.PromptMessage(
                    role="assistant", content=types.TextContent(type="text", text="Sure.")
                ),
            ]
        )

    return Server(
        "prompt-fixture", version="1.0", on_list_prompts=list_prompts, on_get_prompt=get_prompt
    )


async def serve() -> None:
    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--started")
    opts = parser.parse_args()
    if opts.started:
        with open(opts.started, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    anyio.run(serve)


if __name__ == "__main__":
    main()
