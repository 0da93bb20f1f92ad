"""Provider renderings checked with the providers' own SDK types: host.md §2, §7, statement 14.

Tool definitions and results are validated by ``openai``, ``anthropic``,
``google-genai`` and ``mcp`` type definitions (test-only dependencies), and
tool names against each provider's documented name rule.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import warnings
from collections.abc import Iterable
from typing import Any

import anthropic.types as anthropic_types
import callgate_providers as providers
import jsonschema
import mcp.types as mcp_types
import pydantic
import pytest
from callgate import Host, ToolResult, ToolSpec, hookimpl
from callgate.results import ImageBlock, TextBlock
from callgate.schema import canonical_schema
from callgate_providers import PROVIDERS, STRICT_KEYWORDS
from google.genai import types as gemini
from mcp.shared.tool_name_validation import validate_tool_name
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import (
    ChatCompletionToolMessageParam,
    ChatCompletionToolParam,
    ChatCompletionUserMessageParam,
)
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_input_param import FunctionCallOutput

from .permission_tools import GateTools, ProxyTools
from .plugin_dist import REPO, callgate

# Documented name rules. OpenAI: "a-z, A-Z, 0-9, underscores and dashes, at most 64"
# (FunctionDefinition.name); Anthropic: ^[a-zA-Z0-9_-]{1,64}$ (Messages API tools);
# Gemini: starts with a letter or underscore, then letters, digits, _ . : -, at most 128
# (FunctionDeclaration.name); MCP: mcp.shared.tool_name_validation (1-128 of A-Za-z0-9_.-).
NAME_RULES = {
    "openai": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "gemini": re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$"),
}

STRING = {"type": "string"}
ZOO = {
    "nested": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                     "description": "Where."},
            "mode": {"enum": ["fast", "slow"], "default": "fast"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "edits": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {
                "type": "object",
                "properties": {"old": STRING, "new": STRING, "all": {"type": "boolean"}},
                "required": ["old", "new"], "additionalProperties": False}},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "free_form": {
        "type": "object",
        "properties": {"name": STRING, "arguments": {"type": "object"}},
        "required": ["name"],
        "additionalProperties": False,
    },
    "empty": {"type": "object", "additionalProperties": False},
}


class SchemaZoo:
    """Tools whose schemas use the keywords the adapters must handle."""

    __name__ = "schemazoo"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        for name, schema in ZOO.items():
            registry.add(ToolSpec(name=name, description=f"The {name} tool.", schema=schema,
                                  read_only=name == "empty", execute=lambda ctx, args: "ok"))
        registry.add(ToolSpec(name="sometimes", description="Only in some sessions.",
                              schema={"type": "object", "additionalProperties": False},
                              read_only=True, execute=lambda ctx, args: "ok",
                              available=lambda session: False))


@pytest.fixture(scope="module")
def zoo_hosts() -> list[Host]:
    plugins = [GateTools(), ProxyTools(), SchemaZoo()]
    return [Host.boot({}, os=os_name, surface="full", plugins=plugins, entrypoints=False)
            for os_name in ("posix", "windows")]


@pytest.fixture(scope="module")
def installed_hosts() -> list[Host]:
    """The full surface of every installed plugin, for each OS."""
    return [Host.boot({}, os=os_name, surface="full") for os_name in ("posix", "windows")]


def _materialize(value: Any) -> Any:
    """pydantic validates ``Iterable`` fields lazily; walk them so every item is checked."""
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_materialize(v) for v in value]
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return [_materialize(v) for v in value]
    return value


_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


def check_typed(kind: Any, value: Any) -> None:
    """Validate against an SDK TypedDict and require that nothing was dropped as unknown."""
    # the adapter must outlive the lazy iterators it returns, so it is kept
    adapter = _ADAPTERS.setdefault(kind, pydantic.TypeAdapter(kind))
    checked = _materialize(adapter.validate_python(value))
    assert checked == value


def check_model(model: type[pydantic.BaseModel], value: dict[str, Any]) -> pydantic.BaseModel:
    """Validate the JSON text (what goes over the wire) against an SDK pydantic model."""
    parsed = model.model_validate_json(json.dumps(value))
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == value
    return parsed


def _objects(schema: Any) -> Iterable[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema or \
                "object" in (schema.get("type") or []):
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _objects(value)


def _keywords(schema: Any, in_map: bool = False) -> set[str]:
    out: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if not in_map:
                out.add(key)
            out |= _keywords(value, in_map=key in ("properties", "$defs") and not in_map)
    elif isinstance(schema, list):
        for value in schema:
            out |= _keywords(value)
    return out


def check_strict_form(tool: dict[str, Any], spec: ToolSpec) -> None:
    """A strict rendering is what OpenAI's strict mode takes; a non-strict one is canonical."""
    if tool["strict"]:
        params = tool["parameters"]
        # the SDK's own strict normaliser finds nothing to change
        assert _ensure_strict_json_schema(copy.deepcopy(params), path=(),
                                          root=copy.deepcopy(params)) == params
        for node in _objects(params):
            assert node["additionalProperties"] is False
            assert sorted(node["required"]) == sorted(node["properties"])
        assert _keywords(params) <= STRICT_KEYWORDS
    else:
        assert tool["parameters"] == canonical_schema(spec.schema)


def check_surface(host: Host) -> None:
    """Statement 14 for one host: every rendering of the surface validates; names pass."""
    specs = {s.name: s for s in host.registry.tools()}
    names = host.visible_names()
    assert names, "an empty surface proves nothing"
    for name in names:
        for rule, pattern in NAME_RULES.items():
            assert pattern.match(name), f"{name} breaks the {rule} name rule"
        verdict = validate_tool_name(name)
        assert verdict.is_valid and not verdict.warnings, (name, verdict.warnings)

    chat = providers.surface(host, "openai-chat")
    for tool in chat:
        check_typed(ChatCompletionToolParam, tool)
        assert tool["function"]["parameters"] == canonical_schema(
            specs[tool["function"]["name"]].schema)

    for tool in providers.surface(host, "openai-responses"):
        check_typed(FunctionToolParam, tool)
        check_strict_form(tool, specs[tool["name"]])

    responses = {t["name"]: t for t in providers.surface(host, "openai-responses")}
    for tool in providers.surface(host, "openai-chat-strict"):
        check_typed(ChatCompletionToolParam, tool)
        function = tool["function"]
        check_strict_form(function, specs[function["name"]])
        same = responses[function["name"]]
        assert (function["parameters"], function["strict"]) == (same["parameters"],
                                                                same["strict"])

    for tool in providers.surface(host, "anthropic"):
        check_typed(anthropic_types.ToolParam, tool)
        assert tool["input_schema"]["type"] == "object"

    declarations = providers.surface(host, "gemini")
    for tool in declarations:
        parsed = check_model(gemini.FunctionDeclaration, tool)
        assert parsed.parameters_json_schema == canonical_schema(specs[tool["name"]].schema)
    gemini.Tool.model_validate_json(json.dumps({"functionDeclarations": declarations}))

    for tool in providers.surface(host, "mcp"):
        parsed = check_model(mcp_types.Tool, tool)
        spec = specs[parsed.name]
        assert parsed.annotations.read_only_hint is spec.contract_read_only
        assert parsed.annotations.destructive_hint is spec.is_destructive

    for provider in PROVIDERS:
        rendered = providers.surface(host, provider)
        assert len(rendered) == len(names)
        json.dumps(rendered)  # plain JSON, nothing else


def test_stmt14_every_rendering_of_the_test_surface_validates(zoo_hosts) -> None:
    for host in zoo_hosts:
        check_surface(host)


def test_stmt14_every_rendering_of_the_installed_full_surface_validates(installed_hosts) -> None:
    for host in installed_hosts:
        check_surface(host)


def test_the_installed_schemas_convert_to_geminis_schema_type_without_a_warning(
        installed_hosts) -> None:
    """The SDK's conversion to its own ``Schema`` (what the older ``parameters`` field
    takes) goes through without a warning: no integer enums (todo_write's level) and the
    like, so the built-in tools suit either Gemini field."""
    for host in installed_hosts:
        for tool in providers.surface(host, "gemini"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                gemini.Schema.from_json_schema(
                    json_schema=gemini.JSONSchema.model_validate(tool["parametersJsonSchema"]),
                    api_option="GEMINI_API")


def test_openai_chat_strict_is_chat_completions_with_the_strict_form(zoo_hosts) -> None:
    chat = {t["function"]["name"]: t for t in providers.surface(zoo_hosts[0], "openai-chat-strict")}
    nested = chat["nested"]["function"]
    assert nested["strict"] is True and nested["parameters"]["additionalProperties"] is False
    assert chat["free_form"]["function"]["strict"] is False
    assert providers.render_result(ToolResult.ok("x"), "openai-chat-strict") == \
        providers.render_result(ToolResult.ok("x"), "openai-chat")


def test_aliases_are_never_rendered(zoo_hosts) -> None:
    for host in zoo_hosts:
        assert "bash_old" in host.registry  # registered and callable ...
        for provider in PROVIDERS:
            # ... never offered
            assert '"bash_old"' not in json.dumps(providers.surface(host, provider))
        assert [t["name"] for t in providers.surface(host, "anthropic")] == host.visible_names()


def test_openai_strict_form(zoo_hosts) -> None:
    tools = {t["name"]: t for t in providers.surface(zoo_hosts[0], "openai-responses")}
    nested = tools["nested"]
    assert nested["strict"] is True
    props = nested["parameters"]["properties"]
    assert nested["parameters"]["required"] == sorted(props)
    assert props["path"] == {"type": "string", "description": "Where."}  # no min/maxLength
    assert props["limit"] == {"type": ["integer", "null"], "minimum": 1, "maximum": 100}
    assert props["mode"] == {"anyOf": [{"enum": ["fast", "slow"]}, {"type": "null"}]}
    assert props["kind"] == {"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}
    assert props["maybe"] == {"type": ["string", "null"]}
    assert props["when"]["format"] == "date-time" and "format" not in props["site"]
    assert props["edits"]["type"] == ["array", "null"] and props["edits"]["minItems"] == 1
    assert "uniqueItems" not in props["edits"]
    item = props["edits"]["items"]
    assert item["required"] == ["all", "new", "old"]
    assert item["properties"]["all"] == {"type": ["boolean", "null"]}
    assert item["properties"]["old"] == {"type": "string"}
    # a free-form object has no strict form: sent as is, strict off
    assert tools["free_form"]["strict"] is False
    assert tools["free_form"]["parameters"] == canonical_schema(ZOO["free_form"])
    assert tools["empty"] == {"type": "function", "name": "empty", "description": "The empty tool.",
                              "parameters": {"type": "object", "properties": {}, "required": [],
                                             "additionalProperties": False}, "strict": True}


def test_strict_nulls_come_back_as_left_out_arguments(zoo_hosts) -> None:
    host = zoo_hosts[0]
    canonical = canonical_schema(ZOO["nested"])
    sent = {"path": "a.txt", "mode": None, "limit": None, "when": None, "site": None,
            "kind": None, "maybe": None,
            "edits": [{"old": "x", "new": "y", "all": None}]}
    nested = host.registry.get("nested")
    accepted = providers.accept_arguments(nested, "openai-responses", json.dumps(sent))
    assert accepted == {"path": "a.txt", "maybe": None, "edits": [{"old": "x", "new": "y"}]}
    assert providers.accept_arguments(nested, "openai-chat-strict", sent) == accepted
    assert providers.accept_arguments(nested, "openai-chat", sent) == sent  # not strict
    jsonschema.validate(accepted, canonical)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(sent, canonical)  # which is why the adapter maps them back
    # other providers, non-strict tools and malformed text are left alone
    assert providers.accept_arguments(host.registry.get("nested"), "anthropic", sent) == sent
    assert providers.accept_arguments(host.registry.get("free_form"), "openai-responses",
                                      {"name": "x", "arguments": None}) == \
        {"name": "x", "arguments": None}
    assert providers.accept_arguments(nested, "openai-responses", "{oops") == "{oops"
    with pytest.raises(ValueError, match="unknown provider"):
        providers.accept_arguments(nested, "cohere", {})


def test_session_surface_holds_only_available_tools(callgate_session) -> None:
    s = callgate_session(plugins=[SchemaZoo()])
    assert "sometimes" in [t["name"] for t in providers.surface(s.host, "mcp")]
    for provider in PROVIDERS:
        rendered = json.dumps(providers.surface(s.sync, provider))
        assert '"sometimes"' not in rendered and '"nested"' in rendered


def test_unknown_provider_is_refused(zoo_hosts) -> None:
    with pytest.raises(ValueError, match="unknown provider 'bard'"):
        providers.surface(zoo_hosts[0], "bard")
    with pytest.raises(ValueError):
        providers.render_result(ToolResult.ok("x"), "bard")


# --- results --------------------------------------------------------------------------------

PNG = bytes.fromhex("89504e470d0a1a0a") + b"\x00fake-png-body\xff"


def _result(text: str, *, images: int = 0, error: bool = False) -> ToolResult:
    if error:
        result = ToolResult.failure("not_found", text, "FS_NOT_FOUND")
    else:
        result = ToolResult(content=[TextBlock(text)] if text is not None else [])
    result.content += [ImageBlock("image/png", PNG)] * images
    result.call_id, result.name = "call_7", "view_image"
    return result


CASES = [("text", _result("hello\nworld")), ("error", _result("file not found: a", error=True)),
         ("image", _result("a.png: 2x2 PNG", images=1)), ("empty", _result("")),
         ("image-only", _result("", images=1))]


@pytest.mark.parametrize(("label", "result"), CASES)
def test_results_render_to_each_providers_shape(zoo_hosts, label, result) -> None:
    text, images = result.text, len(result.images)

    block = providers.render_result(result, "anthropic")
    check_typed(anthropic_types.ToolResultBlockParam, block)
    assert block["tool_use_id"] == "call_7" and block["is_error"] is result.is_error
    content = block.get("content", [])
    assert [c["type"] for c in content] == ["text"] * bool(text) + ["image"] * images
    assert all(c["text"] for c in content if c["type"] == "text")  # never an empty text block
    for c in content[bool(text):]:
        assert base64.b64decode(c["source"]["data"]) == PNG
        assert c["source"]["media_type"] == "image/png"

    messages = providers.render_result(result, "openai-chat")
    check_typed(ChatCompletionToolMessageParam, messages[0])
    assert messages[0] == {"role": "tool", "tool_call_id": "call_7", "content": text}
    assert len(messages) == 1 + bool(images)
    if images:
        check_typed(ChatCompletionUserMessageParam, messages[1])
        parts = messages[1]["content"]
        assert parts[0] == {"type": "text", "text": "Image from tool call call_7:"}
        url = parts[1]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        assert base64.b64decode(url.split(",", 1)[1]) == PNG

    output = providers.render_result(result, "openai-responses")
    check_typed(FunctionCallOutput, output)
    assert output["call_id"] == "call_7"
    if images:
        kinds = [o["type"] for o in output["output"]]
        assert kinds == ["input_text"] * bool(text) + ["input_image"]
    else:
        assert output["output"] == text

    content_g = check_model(gemini.Content, providers.render_result(result, "gemini"))
    call = content_g.parts[0].function_response
    assert call.name == "view_image" and call.id == "call_7"
    assert call.response == ({"error": text} if result.is_error else {"output": text})
    assert [p.inline_data.data for p in content_g.parts[1:]] == [PNG] * images

    parsed = mcp_types.CallToolResult.model_validate(providers.render_result(result, "mcp"))
    assert parsed.is_error is result.is_error
    kinds = [c.type for c in parsed.content]
    assert kinds == ["text"] * (bool(text) or not images) + ["image"] * images
    if images:
        assert base64.b64decode(parsed.content[-1].data) == PNG
        assert parsed.content[-1].mime_type == "image/png"


# --- the CLI ---------------------------------------------------------------------------------

def test_cli_tools_provider_gemini_prints_definitions_gemini_accepts() -> None:
    proc = callgate("tools", "--provider", "gemini", "--json", "--surface", "full", "--os",
                    "posix", env=None, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    declarations = json.loads(proc.stdout)
    assert declarations
    gemini.Tool.model_validate_json(json.dumps({"functionDeclarations": declarations}))
    bad = callgate("tools", "--provider", "bard", env=None, cwd=REPO)
    assert bad.returncode == 2 and "invalid choice: 'bard'" in bad.stderr
    assert "openai-chat" in bad.stderr and "gemini" in bad.stderr  # the choices are named


def test_a_gemini_surface_past_128_declarations_is_a_clear_error() -> None:
    """Gemini refuses a request with more than 128 function declarations as a whole: the
    rendering says so up front, with the way out, instead of sending it."""
    from callgate import ToolSpec
    from callgate_providers import GEMINI_MAX_DECLARATIONS, TooManyTools, render_tools

    specs = [ToolSpec(name=f"t{i}", description="d", schema={"type": "object"})
             for i in range(GEMINI_MAX_DECLARATIONS + 1)]
    assert len(render_tools(specs[:-1], "gemini")) == GEMINI_MAX_DECLARATIONS
    with pytest.raises(TooManyTools, match=r"at most 128 .* 129 tools: use the lean surface"):
        render_tools(specs, "gemini")
    assert len(render_tools(specs, "anthropic")) == GEMINI_MAX_DECLARATIONS + 1
