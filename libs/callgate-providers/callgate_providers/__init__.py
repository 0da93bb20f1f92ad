"""Provider renderings of the one canonical schema per tool, and of results (host.md §2, §7).

The base renderings (``openai-chat``, ``openai-chat-strict``, ``openai-responses``,
``anthropic``, ``gemini``, ``mcp``) are described once, in `callgate_providers.base`.
The native renderings (`callgate_providers.native`: ``anthropic-native``,
``openai-responses-native``, ``openai-chat-freeform``) show the provider's own tool
shapes in place of the tools they replace; `surface` renders them too, and
`native.run_items` takes their raw call items in and gives raw result items out.
"""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec

from . import base, native
from .base import (
    GEMINI_MAX_DECLARATIONS,
    PROVIDERS,
    STRICT_FORMATS,
    STRICT_KEYWORDS,
    STRICT_PROVIDERS,
    NotStrict,
    Surfaced,
    TooManyTools,
    accepts_null,
    contract_entries,
    contract_entry,
    is_strict,
    nullable,
    render_result,
    render_tool,
    render_tools,
    strict_schema,
)
from .native import NATIVE_PROVIDERS, rendering_for, run_items, shows


def surface(source: Surfaced, provider: str | None = None) -> list[dict[str, Any]]:
    """The visible tools of a host or a session as ``provider`` defines them (``None``:
    canonical entries), in surface order. A session's surface is fixed when it opens.

    A native rendering (`native.RENDERINGS`) shows its faces in place of the tools they
    replace; a host's native surface is what a session opened with
    ``show=shows(host, provider)`` shows."""
    if provider in native.RENDERINGS:
        return native.render_native(source, provider)
    if provider is not None and provider not in PROVIDERS:
        raise _unknown(provider)
    return base.surface(source, provider)


def _unknown(provider: str) -> ValueError:
    names = ", ".join((*PROVIDERS, *NATIVE_PROVIDERS))
    return ValueError(f"unknown provider {provider!r}; use one of {names}")


def accept_arguments(spec: ToolSpec | None, provider: str, arguments: Any) -> Any:
    """`base.accept_arguments`; a native rendering's function calls as its base
    rendering's."""
    if provider in native.RENDERINGS:
        provider = native.RENDERINGS[provider].base
    if provider not in PROVIDERS:
        raise _unknown(provider)
    return base.accept_arguments(spec, provider, arguments)


__all__ = [
    "GEMINI_MAX_DECLARATIONS",
    "NATIVE_PROVIDERS",
    "PROVIDERS",
    "STRICT_FORMATS",
    "STRICT_KEYWORDS",
    "STRICT_PROVIDERS",
    "NotStrict",
    "Surfaced",
    "TooManyTools",
    "accept_arguments",
    "accepts_null",
    "contract_entries",
    "contract_entry",
    "is_strict",
    "nullable",
    "render_result",
    "render_tool",
    "render_tools",
    "rendering_for",
    "run_items",
    "shows",
    "strict_schema",
    "surface",
]
