"""Provider renderings of the one canonical schema per tool, and of results (host.md §2, §7).

Adapters only transform: every rendering starts from the canonical schema
and the registry's flags. Supported providers: ``openai-chat``,
``openai-responses`` (strict function form), ``anthropic``, ``gemini`` and ``mcp``.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Sequence
from typing import Any

from ._model import ImageBlock, ToolResult
from ._schema import canonical_schema
from ._spec import ToolSpec

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp")


def _unknown(provider: str) -> ValueError:
    return ValueError(f"unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's strict form: closed objects, every property required, optional ones nullable."""
    node = copy.deepcopy(schema)

    def walk(s: Any) -> Any:
        if isinstance(s, dict):
            if s.get("type") == "object" or "properties" in s:
                props = s.get("properties", {})
                required = set(s.get("required", []))
                for name, sub in props.items():
                    props[name] = walk(sub)
                    if name not in required:
                        props[name] = _nullable(props[name])
                s["properties"] = props
                s["required"] = sorted(props)
                s["additionalProperties"] = False
            for key in ("items", "anyOf", "oneOf", "allOf", "prefixItems"):
                if key in s:
                    s[key] = walk(s[key])
            return s
        if isinstance(s, list):
            return [walk(x) for x in s]
        return s

    return walk(node)


def _nullable(s: dict[str, Any]) -> dict[str, Any]:
    t = s.get("type")
    if isinstance(t, str):
        if t != "null":
            s = {**s, "type": [t, "null"]}
            if "enum" in s and None not in s["enum"]:
                s["enum"] = [*s["enum"], None]
        return s
    if isinstance(t, list):
        if "null" not in t:
            s = {**s, "type": [*t, "null"]}
        return s
    return {"anyOf": [s, {"type": "null"}]}


def render_tool(spec: ToolSpec, provider: str) -> dict[str, Any]:
    schema = canonical_schema(spec.schema)
    if provider == "openai-chat":
        return {"type": "function", "function": {"name": spec.name,
                                                 "description": spec.description,
                                                 "parameters": schema}}
    if provider == "openai-responses":
        return {"type": "function", "name": spec.name, "description": spec.description,
                "parameters": strict_schema(schema), "strict": True}
    if provider == "anthropic":
        return {"name": spec.name, "description": spec.description, "input_schema": schema}
    if provider == "gemini":
        return {"name": spec.name, "description": spec.description,
                "parametersJsonSchema": schema}
    if provider == "mcp":
        return {"name": spec.name, "description": spec.description, "inputSchema": schema,
                "annotations": {"readOnlyHint": spec.contract_read_only,
                                "destructiveHint": spec.is_destructive}}
    raise _unknown(provider)


def render_tools(specs: Sequence[ToolSpec], provider: str) -> list[dict[str, Any]]:
    return [render_tool(s, provider) for s in specs]


def _b64(block: ImageBlock) -> str:
    return base64.b64encode(block.data).decode()


def render_result(result: ToolResult, provider: str) -> Any:
    """The provider's tool-result shape (for ``openai-chat``: a list of messages)."""
    text = result.text
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    call_id = result.call_id or ""
    if provider == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "image", "source": {"type": "base64", "media_type": b.media_type,
                                                 "data": _b64(b)}} for b in images]
        return {"type": "tool_result", "tool_use_id": call_id, "content": content,
                "is_error": result.is_error}
    if provider == "openai-chat":
        messages: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": call_id,
                                           "content": text}]
        if images:
            parts: list[dict[str, Any]] = [{"type": "text",
                                            "text": f"Image from tool call {call_id}:"}]
            parts += [{"type": "image_url", "image_url": {
                "url": f"data:{b.media_type};base64,{_b64(b)}"}} for b in images]
            messages.append({"role": "user", "content": parts})
        return messages
    if provider == "openai-responses":
        if not images:
            return {"type": "function_call_output", "call_id": call_id, "output": text}
        output: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
        output += [{"type": "input_image",
                    "image_url": f"data:{b.media_type};base64,{_b64(b)}"} for b in images]
        return {"type": "function_call_output", "call_id": call_id, "output": output}
    if provider == "gemini":
        parts = [{"functionResponse": {"name": result.name or "", "id": call_id,
                                       "response": {"error" if result.is_error else "output":
                                                    text}}}]
        parts += [{"inlineData": {"mimeType": b.media_type, "data": _b64(b)}} for b in images]
        return {"role": "user", "parts": parts}
    if provider == "mcp":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        blocks += [{"type": "image", "data": _b64(b), "mimeType": b.media_type} for b in images]
        return {"content": blocks, "isError": result.is_error}
    raise _unknown(provider)


__all__ = ["PROVIDERS", "render_result", "render_tool", "render_tools", "strict_schema"]

