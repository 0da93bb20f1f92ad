"""Provider-native renderings: each model's own tool shapes, through the same gates (issue 32).

A native rendering is a base rendering (``anthropic``, ``openai-responses``,
``openai-chat``) in which the `NativeFace`\\ s the tools' plugins declare
(``ToolSpec.native``) stand in for the canonical tools they replace: the face's entry is
sent once, where the first replaced tool would be, and every other tool is a function as
in the base rendering. Calls come back as the provider's raw items; `run_items` maps each
onto canonical calls, runs them as one batch through the session (validation,
permissions, the file gate, the sandbox: nothing is skipped) and answers with the
provider's raw result items. What each rendering suits is data (`RENDERINGS`);
`rendering_for` picks one by model name, and choosing is the integrator's call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from callgate import ToolCall, ToolResult, ToolSpec
from callgate.native import NativeFace, NativeInputError

from .base import accept_arguments, render_result, render_tool


@attrs.frozen
class Rendering:
    """A native rendering: its base rendering, the models it suits, and the model-name
    patterns `rendering_for` matches (first match wins, in `RENDERINGS` order)."""

    name: str
    base: str
    suits: str
    models: tuple[str, ...]


RENDERINGS: dict[str, Rendering] = {
    r.name: r
    for r in (
        Rendering(
            "anthropic-native",
            "anthropic",
            "Claude 4.x models (Opus/Sonnet/Haiku 4 and later) on the Messages API: they are "
            "trained on text_editor_20250728 and bash_20250124.",
            (r"^claude-(opus|sonnet|haiku)-4", r"^claude-[a-z]+-[5-9]", r"^claude-4"),
        ),
        Rendering(
            "openai-responses-native",
            "openai-responses",
            "GPT-5.1 and later and the codex models on the Responses API: they are trained on "
            "apply_patch and shell.",
            (r"^gpt-5\.[1-9]", r"^gpt-5(\.\d+)?-codex", r"^gpt-[6-9]", r"codex"),
        ),
        Rendering(
            "openai-chat-freeform",
            "openai-chat",
            "gpt-5 family models on Chat Completions: apply_patch as a freeform custom tool "
            "whose input a Lark grammar constrains (no JSON-escaped diffs).",
            (r"^gpt-5",),
        ),
    )
}
NATIVE_PROVIDERS = tuple(RENDERINGS)


def rendering_for(model: str) -> str | None:
    """The native rendering that suits ``model`` (``"claude-sonnet-4-5"`` →
    ``anthropic-native``, ``"gpt-5.1-codex"`` → ``openai-responses-native``), or ``None``:
    use a plain rendering. Only a suggestion; the integrator picks."""
    name = model.strip().lower().rsplit("/", 1)[-1]  # "openai/gpt-5.1" as routers spell it
    for rendering in RENDERINGS.values():
        if any(re.search(p, name) for p in rendering.models):
            return rendering.name
    return None


def _unknown(name: str) -> ValueError:
    return ValueError(f"unknown native rendering {name!r}; use one of {', '.join(RENDERINGS)}")


def _lookup(source: Any, name: str) -> ToolSpec | None:
    tool = getattr(source, "tool", None)
    if callable(tool):
        return tool(name)  # type: ignore[no-any-return]
    return source.registry.get(name)  # type: ignore[no-any-return]


def _all_tools(source: Any) -> list[ToolSpec]:
    if callable(getattr(source, "available_tools", None)):
        tools: dict[str, ToolSpec] = source.available_tools()
        return list(tools.values())
    return list(source.session_tools())


def faces(source: Any, rendering: str) -> list[NativeFace]:
    """The faces of ``rendering`` that the tools of ``source`` (a host or a session) declare."""
    if rendering not in RENDERINGS:
        raise _unknown(rendering)
    found: list[NativeFace] = []
    for spec in _all_tools(source):
        found += [f for f in spec.native if f.rendering == rendering and f not in found]
    return found


def _host(source: Any) -> Any:
    return source.host if callable(getattr(source, "available_tools", None)) else source


def _is_session(source: Any) -> bool:
    return callable(getattr(source, "available_tools", None))


def deferred(source: Any, rendering: str) -> list[str]:
    """The hidden tools ``rendering`` sends deferred (``defer_loading: true``) for
    ``source``: none unless one of its faces is a tool search (`NativeFace.defers`) that
    is live. Tools on the host's surface (``[surface] show`` pins a hidden one) stay
    loaded; a tool a face runs or replaces, or one ``[surface] hide`` names, is never
    deferred. For a session, only those its surface has (`shows` at open)."""
    host = _host(source)
    pinned = set(host.visible_names())
    live = faces(source, rendering)
    if not any(f.defers and pinned & set(f.replaces) for f in live):
        return []
    kept = pinned | {n for f in live for n in (*f.shows, *f.replaces)}
    kept |= set(host.config("surface").get("hide", ()))
    names = [s.name for s in _all_tools(source) if s.visibility == "hidden" and s.name not in kept]
    if _is_session(source):
        visible = set(source.tool_names())
        names = [n for n in names if n in visible]
    return names


def shows(source: Any, rendering: str) -> list[str]:
    """The hidden tools a session for ``rendering`` puts on its surface (pass them as
    ``host.open_session(..., show=...)``): what its faces run directly, and the deferred
    tools of a tool-search face."""
    explicit = [n for f in faces(source, rendering) for n in f.shows]
    return list(dict.fromkeys([*explicit, *deferred(source, rendering)]))


def native_specs(source: Any, rendering: str) -> tuple[list[ToolSpec], list[NativeFace]]:
    """The tools of ``source`` shown as functions, and the faces shown in their place."""
    specs = list(source.surface_specs())
    names = {s.name for s in specs}
    if not _is_session(source):  # a host: as a session opened with `shows` shows
        hidden = set(source.config("surface").get("hide", ()))
        for name in shows(source, rendering):
            if name in hidden:
                continue
            spec = _lookup(source, name)
            if spec is not None and name not in names:
                specs.append(spec)
                names.add(name)
    live = [f for f in faces(source, rendering) if names & set(f.replaces)]
    return specs, live


#: OpenAI: "keep namespaces under 10 functions" (the tool-search guide)
NAMESPACE_SIZE = 10


def _namespaces(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    groups: dict[str, list[ToolSpec]] = {}
    for spec in specs:
        groups.setdefault(re.sub(r"[^A-Za-z0-9_-]", "_", spec.plugin or "tools"), []).append(spec)
    out = []
    for group, members in groups.items():
        chunks = [members[i : i + NAMESPACE_SIZE] for i in range(0, len(members), NAMESPACE_SIZE)]
        for k, chunk in enumerate(chunks):
            out.append(
                {
                    "type": "namespace",
                    "name": group if len(chunks) == 1 else f"{group}_{k + 1}",
                    "description": "Tools: " + ", ".join(s.name for s in chunk),
                    "tools": [_deferred_entry(s, "openai-responses") for s in chunk],
                }
            )
    return out


def _deferred_entry(spec: ToolSpec, base: str) -> dict[str, Any]:
    return {**render_tool(spec, base), "defer_loading": True}


def render_native(source: Any, rendering: str) -> list[dict[str, Any]]:
    """The tool entries ``rendering`` sends for ``source`` (a host or a session), in
    surface order: each face's entry where its first replaced tool would be, the other
    tools as functions of the base rendering; with a tool-search face, the deferred tools
    last (``defer_loading: true``; on the Responses API in namespaces of at most
    `NAMESPACE_SIZE`)."""
    base = RENDERINGS[rendering].base if rendering in RENDERINGS else None
    if base is None:
        raise _unknown(rendering)
    specs, live = native_specs(source, rendering)
    later = set(deferred(source, rendering))
    out: list[dict[str, Any]] = []
    placed: set[int] = set()
    for spec in specs:
        if spec.name in later:
            continue
        face = next((i for i, f in enumerate(live) if spec.name in f.replaces), None)
        if face is None:
            out.append(render_tool(spec, base))
        elif face not in placed:
            placed.add(face)
            out.append(json.loads(json.dumps(live[face].entry)))  # a copy the caller may keep
    rest = [s for s in specs if s.name in later]
    if rest and base == "openai-responses":
        out += _namespaces(rest)
    else:
        out += [_deferred_entry(s, base) for s in rest]
    return out


# --- calls in, results out ------------------------------------------------------------------


def item_id(item: Any) -> str:
    """The call id of a raw item (``id`` of a ``tool_use``, ``call_id`` of a Responses
    item, ``id`` of a chat tool call), or ``""``."""
    if not isinstance(item, Mapping):
        return ""
    for key in ("call_id", "id", "tool_use_id"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    return ""


def _function_call(rendering: str, item: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The ``(name, arguments)`` of a plain function call item of ``rendering``."""
    base = RENDERINGS[rendering].base
    if base == "anthropic" and item.get("type") == "tool_use":
        name, arguments = item.get("name"), item.get("input")
    elif base == "openai-responses" and item.get("type") == "function_call":
        name, arguments = item.get("name"), item.get("arguments")
    elif base == "openai-chat" and item.get("type") == "function":
        function = item.get("function")
        if not isinstance(function, Mapping):
            return None
        name, arguments = function.get("name"), function.get("arguments")
    else:
        return None
    return (name, arguments) if isinstance(name, str) else None


def _expected(rendering: str) -> str:
    return {
        "anthropic": 'a "tool_use" block {"type", "id", "name", "input"}',
        "openai-responses": 'a Responses output item ("function_call", or a native call item '
        "such as apply_patch_call or shell_call) with a call_id",
        "openai-chat": 'a chat tool call {"id", "type": "function" or "custom", ...}',
    }[RENDERINGS[rendering].base]


def invalid_item(rendering: str, item: Any, message: str) -> ToolResult:
    """The error result of a call item that maps onto nothing (no face and no function)."""
    result = ToolResult.failure(
        "invalid_arguments",
        f"{message}; expected {_expected(rendering)}",
        "invalid_native_item",
        {"executed": False},
    )
    result.call_id = item_id(item) or None
    return result


@attrs.define
class _Planned:
    item: Any
    face: NativeFace | None = None
    calls: list[ToolCall] = attrs.field(factory=list)
    error: ToolResult | None = None
    function: bool = False


def _plan(
    session: Any, rendering: str, live: Sequence[NativeFace], item: Any, index: int
) -> _Planned:
    if not isinstance(item, Mapping):
        return _Planned(item, error=invalid_item(rendering, item, "the call item is not an object"))
    call_id = item_id(item) or f"native-{index + 1}"
    face = next((f for f in live if f.handles(item)), None)
    if face is not None:
        try:
            pairs = list(face.calls(item, session))
        except NativeInputError as exc:
            error = ToolResult.failure(
                "invalid_arguments", str(exc), "invalid_native_input", {"executed": False}
            )
            error.call_id = call_id
            return _Planned(item, face, error=error)
        ids = [call_id] if len(pairs) == 1 else [f"{call_id}#{k + 1}" for k in range(len(pairs))]
        return _Planned(
            item, face, [ToolCall(i, n, a) for i, (n, a) in zip(ids, pairs, strict=True)]
        )
    function = _function_call(rendering, item)
    if function is None:
        return _Planned(
            item, error=invalid_item(rendering, item, "not a call item of this rendering")
        )
    name, arguments = function
    base = RENDERINGS[rendering].base
    arguments = accept_arguments(session.tool(name), base, arguments)  # strict nulls
    return _Planned(item, calls=[ToolCall(call_id, name, arguments)], function=True)


def _search_answer(
    session: Any, rendering: str, planned: _Planned, results: Sequence[ToolResult]
) -> Any:
    """A tool-search face's answer: the deferred tools its search found, as the provider
    loads them."""
    assert planned.face is not None
    base = RENDERINGS[rendering].base
    call_id = item_id(planned.item)
    failed = next((r for r in results if r.is_error), None)
    later = deferred(session, rendering)
    names = [] if failed else [n for n in dict.fromkeys(planned.face.found(results)) if n in later]
    session.count("tool_search_searched")
    session.count("tool_search_found", len(names))
    if base == "anthropic":
        if failed is not None:
            failed.call_id = call_id
            return render_result(failed, base)
        content: list[dict[str, Any]] = [{"type": "tool_reference", "tool_name": n} for n in names]
        if not content:
            content = [{"type": "text", "text": "no deferred tool matches; try other words"}]
        return {"type": "tool_result", "tool_use_id": call_id, "content": content}
    tools = [_deferred_entry(s, base) for n in names if (s := session.tool(n)) is not None]
    return {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    }


def _answer(session: Any, rendering: str, planned: _Planned, results: Sequence[ToolResult]) -> Any:
    base = RENDERINGS[rendering].base
    if planned.face is not None and planned.face.defers:
        return _search_answer(session, rendering, planned, results)
    if planned.face is not None:
        return planned.face.answer(planned.item, results)
    [result] = results
    rendered = render_result(result, base)
    if base == "openai-chat" and isinstance(rendered, list) and len(rendered) == 1:
        return rendered[0]
    return rendered


#: the session-storage namespace of the native items a session ran (`_record`)
RECORD_NAMESPACE = "callgate.native"


def _record(session: Any, rendering: str, planned: _Planned) -> None:
    """Keep the provider's raw item with the canonical calls it became (their ids and
    tools; the calls themselves are in the session's timeline under those ids), under
    the item's call id: a transcript can be replayed in either form."""
    key = item_id(planned.item)
    if not key or not planned.calls:
        return
    session.storage.put(
        RECORD_NAMESPACE,
        key,
        {
            "provider": rendering,
            "item": planned.item,
            "calls": [{"id": c.id, "tool": c.name} for c in planned.calls],
        },
    )


async def run_items(session: Any, rendering: str, items: Sequence[Any]) -> list[Any]:
    """Run one model turn's raw call items of ``rendering`` through ``session`` as one batch;
    one raw result item per call item, in order (``openai-chat`` ones are ``tool``
    messages; a result with images adds a ``user`` message: see `render_result`).

    Each item is recorded with the canonical calls it became (``session.storage``,
    namespace `RECORD_NAMESPACE`, keyed by the item's call id). A face's item runs the
    canonical calls its face maps it to; a plain function call runs
    as itself (strict renderings' nulls mapped back, as `accept_arguments` does). An item
    that maps onto nothing, or a face input it cannot map, answers an error in the
    provider's shape and runs nothing."""
    live = faces(session, rendering)
    later = set(deferred(session, rendering))
    plans = [_plan(session, rendering, live, item, i) for i, item in enumerate(items)]
    for planned in plans:
        _record(session, rendering, planned)
    calls = [c for p in plans for c in p.calls]
    results = iter(await session.run_batch(calls) if calls else [])
    out = []
    for planned in plans:
        if planned.error is not None:
            if planned.face is None:
                base = RENDERINGS[rendering].base
                rendered = render_result(planned.error, base)
                out.append(rendered[0] if base == "openai-chat" else rendered)
            elif planned.face.defers:
                out.append(_search_answer(session, rendering, planned, [planned.error]))
            else:
                out.append(planned.face.answer(planned.item, [planned.error]))
            continue
        if planned.function and planned.calls[0].name in later:
            session.count("tool_search_called")
        out.append(_answer(session, rendering, planned, [next(results) for _ in planned.calls]))
    return out


__all__ = [
    "NAMESPACE_SIZE",
    "NATIVE_PROVIDERS",
    "RECORD_NAMESPACE",
    "RENDERINGS",
    "NativeFace",
    "NativeInputError",
    "Rendering",
    "deferred",
    "faces",
    "invalid_item",
    "item_id",
    "native_specs",
    "render_native",
    "rendering_for",
    "run_items",
    "shows",
]
