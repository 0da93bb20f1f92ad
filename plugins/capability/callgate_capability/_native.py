"""Native tool search (issue 32): the catalog search of ``use_capability`` as the client-run
tool search Anthropic's and OpenAI's newer models are trained on.

In the ``anthropic-native`` and ``openai-responses-native`` renderings this face stands in
for ``use_capability``: the session's hidden tools are sent deferred (``defer_loading:
true``), the model searches with ``tool_search``, and the core answers with the deferred
tools the catalog search found (``tool_reference`` blocks; a ``tool_search_output`` with
their definitions). Every other rendering keeps ``use_capability``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from callgate import ToolResult
from callgate.native import NativeFace, NativeInputError

from .tools.specs import PROXY_NAME

SEARCH = "tool_search"
DESCRIPTION = ("Search the catalog of tools that are not loaded yet by what you need to do "
               "(a few words: 'rename a symbol', 'fetch a web page'); the tools found are "
               "loaded and you can call them directly.")
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200,
                  "description": "What you need a tool for."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 8,
                  "description": "Most tools to load (default 5)."},
    },
}


def _search(arguments: Any) -> list[tuple[str, Any]]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise NativeInputError(f"{SEARCH}: arguments must be a JSON object {{query}}") from None
    if not isinstance(arguments, Mapping) or not isinstance(arguments.get("query"), str):
        raise NativeInputError(f"{SEARCH}: arguments must be an object with a query string")
    call: dict[str, Any] = {"action": "search", "query": arguments["query"]}
    if "limit" in arguments:
        call["limit"] = arguments["limit"]
    return [(PROXY_NAME, call)]


def found(results: Sequence[ToolResult]) -> list[str]:
    """The registered tools the catalog search found, best first (MCP capabilities are
    reached through ``use_capability``, not loaded by name)."""
    names = []
    for result in results:
        try:
            listed = json.loads(result.text).get("results", [])
        except (ValueError, AttributeError):
            continue
        names += [r["id"].removeprefix("tool:") for r in listed
                  if isinstance(r, Mapping) and isinstance(r.get("id"), str)
                  and r["id"].startswith("tool:")]
    return names


ANTHROPIC_SEARCH = NativeFace(
    rendering="anthropic-native",
    entry={"name": SEARCH, "description": DESCRIPTION, "input_schema": PARAMETERS},
    replaces=(PROXY_NAME,),
    handles=lambda item: item.get("type") == "tool_use" and item.get("name") == SEARCH,
    calls=lambda item, session: _search(item.get("input")),
    defers=True,
    found=found,
)

OPENAI_SEARCH = NativeFace(
    rendering="openai-responses-native",
    entry={"type": "tool_search", "execution": "client", "description": DESCRIPTION,
           "parameters": PARAMETERS},
    replaces=(PROXY_NAME,),
    handles=lambda item: item.get("type") == "tool_search_call",
    calls=lambda item, session: _search(item.get("arguments")),
    defers=True,
    found=found,
)

FACES = (ANTHROPIC_SEARCH, OPENAI_SEARCH)
