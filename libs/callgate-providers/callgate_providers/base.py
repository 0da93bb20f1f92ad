"""The base provider renderings of the one canonical schema per tool, and of results
(host.md §2, §7); `callgate_providers` adds the native renderings on top.

Adapters only transform: every rendering starts from the canonical schema
and the registry's flags. Supported providers:

- ``openai-chat``: Chat Completions ``tools`` entries (``{"type": "function",
  "function": {...}}``); results are a ``tool`` message, plus a ``user``
  message carrying images (tool messages carry text only).
- ``openai-chat-strict``: the same entries with ``"strict": true`` in the
  function and the strict schema (as ``openai-responses``); results as
  ``openai-chat``. Chat's structured-outputs mode for function calling.
- ``openai-responses``: Responses API function tools in the strict form
  (closed objects, every property required, optional ones nullable, only the
  keywords strict mode accepts). A schema strict mode cannot express without
  changing its meaning (a free-form object) is sent with ``strict: false``
  and its canonical schema instead. `accept_arguments` maps the nulls a
  strict call sends for left-out optional properties back to absence.
- ``anthropic``: Messages API tools (``input_schema``) and ``tool_result`` blocks.
- ``gemini``: ``FunctionDeclaration`` with ``parametersJsonSchema`` (the full
  JSON Schema; nothing dropped), ``functionResponse`` parts.
- ``mcp``: ``Tool`` with ``title``, ``inputSchema``, ``outputSchema`` (a tool whose result
  is data too: ``ToolSpec.output_schema``) and ``annotations`` (``title``,
  ``idempotentHint``, ``openWorldHint``, ``readOnlyHint``,
  ``destructiveHint``), ``CallToolResult``.

The native renderings (`callgate_providers.native`: ``anthropic-native``,
``openai-responses-native``, ``openai-chat-freeform``) show the provider's own tool
shapes in place of the tools they replace; `surface` renders them too, and
`native.run_items` takes their raw call items in and gives raw result items out.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from typing import Any, Protocol

from callgate import ToolResult, ToolSpec
from callgate.results import ImageBlock
from callgate.schema import canonical_schema, contract_entries, contract_entry

PROVIDERS = ("openai-chat", "openai-chat-strict", "openai-responses", "anthropic", "gemini", "mcp")
#: The renderings in OpenAI's strict form, whose calls `accept_arguments` maps back.
STRICT_PROVIDERS = frozenset({"openai-chat-strict", "openai-responses"})

#: Keywords OpenAI's strict mode accepts (its "supported schemas" list: types, enum,
#: const, anyOf, $ref/$defs, string pattern/format, number bounds, array item counts).
#: Others are dropped from the strict rendering; the host still validates every call
#: against the canonical schema, so nothing the model sends escapes a constraint.
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "$ref",
        "$defs",
        "definitions",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_SCHEMA_MAPS = ("properties", "$defs", "definitions")


class NotStrict(Exception):
    """The schema cannot be put in strict form without changing what it accepts."""


def _unknown(provider: str) -> ValueError:
    return ValueError(f"unknown provider {provider!r}; use one of {', '.join(PROVIDERS)}")


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def _is_object(schema: dict[str, Any]) -> bool:
    return "object" in _types(schema) or "properties" in schema


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's strict form of a canonical schema; raises `NotStrict` when it has none.

    Objects are closed and list every property as required, the optional ones
    made nullable; ``oneOf`` becomes ``anyOf``; keywords strict mode rejects
    are dropped. An object that accepts undeclared keys (no ``properties``, or
    ``additionalProperties`` other than false) has no strict form: closing it
    would forbid every key the tool expects.
    """

    def walk(node: Any, where: str) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "oneOf":
                key = "anyOf"
            if key not in STRICT_KEYWORDS:
                continue
            if key == "format" and value not in STRICT_FORMATS:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: walk(v, f"{where}/{key}/{k}") for k, v in value.items()}
            elif key == "items" and isinstance(value, dict):
                out[key] = walk(value, f"{where}/items")
            elif key == "anyOf" and isinstance(value, list):
                out[key] = [walk(v, f"{where}/anyOf/{i}") for i, v in enumerate(value)]
            else:
                out[key] = copy.deepcopy(value)
        if _is_object(node):
            extra = node.get("additionalProperties")
            if extra not in (None, False) or (extra is None and "properties" not in node):
                raise NotStrict(f"{where or '/'}: an object that accepts undeclared keys")
            required = set(node.get("required", []))
            props = out.get("properties", {})
            for name in props:
                if name not in required:
                    props[name] = nullable(props[name])
            out["properties"] = props
            out["required"] = sorted(props)
            out["additionalProperties"] = False
        return out

    if not _is_object(schema) or any(k in schema for k in ("anyOf", "oneOf")):
        raise NotStrict("/: the root must be a plain object")
    return walk(schema, "")


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null`` (how strict mode spells an optional property)."""
    if accepts_null(schema):
        return schema
    types = _types(schema)
    if types and "const" not in schema and "$ref" not in schema and "anyOf" not in schema:
        out = {**schema, "type": [*types, "null"]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if "anyOf" in schema and len(schema) == 1:
        return {"anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def accepts_null(schema: Any) -> bool:
    """Whether a (sub)schema plainly admits ``null`` (conservative: no $ref resolution)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    if "enum" in schema:
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    if "anyOf" in schema or "oneOf" in schema:
        return any(accepts_null(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    types = _types(schema)
    return "null" in types if types else False


def is_strict(spec: ToolSpec) -> bool:
    """Whether the strict renderings (``openai-responses``, ``openai-chat-strict``) of this
    tool are strict."""
    try:
        strict_schema(canonical_schema(spec.schema))
    except NotStrict:
        return False
    return True


def render_tool(spec: ToolSpec, provider: str) -> dict[str, Any]:
    """One tool definition as ``provider`` takes it."""
    schema = canonical_schema(spec.schema)
    if provider == "openai-chat":
        return {
            "type": "function",
            "function": {"name": spec.name, "description": spec.description, "parameters": schema},
        }
    if provider == "openai-chat-strict":
        try:
            function = {
                "name": spec.name,
                "description": spec.description,
                "parameters": strict_schema(schema),
                "strict": True,
            }
        except NotStrict:
            function = {
                "name": spec.name,
                "description": spec.description,
                "parameters": schema,
                "strict": False,
            }
        return {"type": "function", "function": function}
    if provider == "openai-responses":
        try:
            return {
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "parameters": strict_schema(schema),
                "strict": True,
            }
        except NotStrict:
            return {
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "parameters": schema,
                "strict": False,
            }
    if provider == "anthropic":
        entry = {"name": spec.name, "description": spec.description, "input_schema": schema}
        if spec.examples:  # Anthropic's input_examples: a copy, the spec's stay as declared
            entry["input_examples"] = copy.deepcopy(list(spec.examples))
        return entry
    if provider == "gemini":
        return {"name": spec.name, "description": spec.description, "parametersJsonSchema": schema}
    if provider == "mcp":
        tool: dict[str, Any] = {
            "name": spec.name,
            "title": spec.display_title,
            "description": spec.description,
            "inputSchema": schema,
            "annotations": {
                "title": spec.display_title,
                "readOnlyHint": spec.contract_read_only,
                "destructiveHint": spec.is_destructive,
                "idempotentHint": spec.is_idempotent,
                "openWorldHint": spec.open_world,
            },
        }
        if spec.output_schema is not None:
            tool["outputSchema"] = spec.output_schema
        return tool
    raise _unknown(provider)


#: Gemini (Vertex AI) accepts at most this many function declarations in a request.
GEMINI_MAX_DECLARATIONS = 128


class TooManyTools(ValueError):
    """The surface has more tools than the provider accepts in one request."""


def render_tools(specs: Sequence[ToolSpec], provider: str | None) -> list[dict[str, Any]]:
    """``specs`` as ``provider`` defines tools (``None``: canonical entries). Raises
    `TooManyTools` for a ``gemini`` surface of more than `GEMINI_MAX_DECLARATIONS` tools,
    which the API would refuse as a whole."""
    if provider is None:
        return [contract_entry(s) for s in specs]
    if provider == "gemini" and len(specs) > GEMINI_MAX_DECLARATIONS:
        raise TooManyTools(
            f"gemini accepts at most {GEMINI_MAX_DECLARATIONS} function declarations and "
            f"this surface has {len(specs)} tools: use the lean surface ([surface] mode = "
            '"lean", hidden tools reached through the capability proxy) or hide tools with '
            "[surface] hide"
        )
    return [render_tool(s, provider) for s in specs]


class Surfaced(Protocol):
    """A host or a session: what it shows the model, in surface order."""

    def surface_specs(self) -> list[ToolSpec]: ...


def surface(source: Surfaced, provider: str | None = None) -> list[dict[str, Any]]:
    """The visible tools of a host or a session as ``provider`` defines them (``None``:
    canonical entries), in surface order. A session's surface is fixed when it opens."""
    return render_tools(source.surface_specs(), provider)


# --- arguments coming back -------------------------------------------------------------


def _drop_strict_nulls(schema: Any, value: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        required = set(schema.get("required", []))
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is None and sub is not None and key not in required and not accepts_null(sub):
                continue  # strict mode's spelling of "left out"
            out[key] = _drop_strict_nulls(sub, item) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_drop_strict_nulls(schema["items"], v) for v in value]
    return value


def accept_arguments(spec: ToolSpec | None, provider: str, arguments: Any) -> Any:
    """A provider's call arguments in the canonical form the pipeline validates (``spec``:
    the tool the call names, ``session.tool(name)``; ``None``, a name the session does not
    have, leaves them as they are for the pipeline to answer).

    Only the strict renderings (``openai-responses``, ``openai-chat-strict``)
    change anything: there the model must send every property, ``null``
    standing for an optional one it left out, so such nulls are removed (a
    property whose canonical schema admits ``null`` keeps it). A JSON text is
    decoded first; anything that is not valid JSON is returned unchanged, for
    validation to report.
    """
    if provider not in PROVIDERS:
        raise _unknown(provider)
    if spec is None or provider not in STRICT_PROVIDERS or not is_strict(spec):
        return arguments
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
    return _drop_strict_nulls(canonical_schema(spec.schema), value)


# --- results -----------------------------------------------------------------------------


def _b64(block: ImageBlock) -> str:
    return base64.b64encode(block.data).decode()


def _data_url(block: ImageBlock) -> str:
    return f"data:{block.media_type};base64,{_b64(block)}"


def render_result(result: ToolResult, provider: str) -> Any:
    """The provider's tool-result shape (web-and-media.md's table for image blocks).

    ``openai-chat`` gets a list of messages (the tool message, then a user
    message with the images when there are any); the others one object.
    """
    text = result.text
    images = result.images
    call_id = result.call_id or ""
    if provider == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": b.media_type, "data": _b64(b)},
            }
            for b in images
        ]
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "is_error": result.is_error,
        }
        if content:  # the API rejects empty text blocks; an absent content is allowed
            block["content"] = content
        return block
    if provider in ("openai-chat", "openai-chat-strict"):
        messages: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": call_id, "content": text}
        ]
        if images:
            parts: list[dict[str, Any]] = [
                {"type": "text", "text": f"Image from tool call {call_id}:"}
            ]
            parts += [{"type": "image_url", "image_url": {"url": _data_url(b)}} for b in images]
            messages.append({"role": "user", "content": parts})
        return messages
    if provider == "openai-responses":
        if not images:
            return {"type": "function_call_output", "call_id": call_id, "output": text}
        output: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
        output += [{"type": "input_image", "image_url": _data_url(b)} for b in images]
        return {"type": "function_call_output", "call_id": call_id, "output": output}
    if provider == "gemini":
        response: dict[str, Any] = {
            "name": result.name or "",
            "response": {"error" if result.is_error else "output": text},
        }
        if call_id:
            response = {"id": call_id, **response}
        parts = [{"functionResponse": response}]
        parts += [{"inlineData": {"mimeType": b.media_type, "data": _b64(b)}} for b in images]
        return {"role": "user", "parts": parts}
    if provider == "mcp":
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": text}] if text or not images else []
        )
        blocks += [{"type": "image", "data": _b64(b), "mimeType": b.media_type} for b in images]
        return {"content": blocks, "isError": result.is_error}
    raise _unknown(provider)


__all__ = [
    "PROVIDERS",
    "STRICT_PROVIDERS",
    "NotStrict",
    "Surfaced",
    "accept_arguments",
    "contract_entries",
    "contract_entry",
    "is_strict",
    "nullable",
    "render_result",
    "render_tool",
    "render_tools",
    "strict_schema",
    "surface",
]
