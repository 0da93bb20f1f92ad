"""`NativeFace`: how a tool family appears in a provider-native rendering (issue 32).

A provider may have trained its models on its own tool shapes (Anthropic's
``text_editor_20250728`` and ``bash_20250124``, OpenAI's ``apply_patch`` and ``shell``).
Such a shape is only a *rendering* plus an *argument mapping*: the plugin that owns the
canonical tools declares a face on one of its `ToolSpec`\\ s (``ToolSpec.native``), and
an installed rendering (`callgate_providers.native`) sends the face's entry in place of
the tools it replaces, turns the provider's raw call item into canonical calls (run
through the one pipeline: validation, permissions, the file gate, the sandbox) and their
results into the provider's raw result item. The core names no tool: the face does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs


def as_tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    """``tuple(value)`` as a field converter: attrs reads a Python function's signature
    cheaply, a builtin's by parsing its text signature (~1 ms each at import, issue 38)."""
    return tuple(value)


def as_frozenset(value: Iterable[Any]) -> frozenset[Any]:
    """``frozenset(value)`` as a field converter (see `as_tuple`)."""
    return frozenset(value)


class NativeInputError(Exception):
    """A native call item whose input the face cannot map (a missing ``command``, an
    unknown one, a wrong type): the message is written for the model and comes back in
    the provider's result shape; nothing runs."""


@attrs.frozen
class NativeFace:
    """One provider-native tool entry and how its calls map onto canonical tools.

    - ``rendering`` names the rendering it belongs to (`callgate_providers.native`).
    - ``entry`` is the tool entry sent, exactly (``{"type": "bash_20250124", "name": "bash"}``).
    - ``replaces`` names the canonical tools it stands in for: they are left out of the
      rendering, and the entry takes the place of the first one on the surface.
    - ``shows`` names hidden tools a session opened for this rendering puts on its
      surface (the face's calls run them directly).
    - ``handles(item)`` says whether a raw call item is this face's.
    - ``calls(item, session)`` gives the canonical ``(tool name, arguments)`` pairs the
      item runs, in order (raises `NativeInputError` for an input it cannot map); the
      session is there to ask what a path is (a directory ``view`` lists it).
    - ``answer(item, results)`` gives the raw result item from the results of those calls
      (one error result when the input could not be mapped).
    - ``defers``: the face is a client-executed tool search. A rendering with one sends
      every hidden tool of the session as a deferred function (``defer_loading: true``;
      the tools on the host's surface, ``[surface] show`` included, stay loaded: pinned).
      ``found(results)`` names the tools its calls' results found, best first; the core
      answers with those that are deferred (Anthropic ``tool_reference`` blocks, OpenAI
      ``tool_search_output`` definitions), and ``answer`` is not used.
    """

    rendering: str
    entry: Mapping[str, Any]
    replaces: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    handles: Callable[[Mapping[str, Any]], bool] = attrs.field(default=lambda item: False)
    calls: Callable[[Mapping[str, Any], Any], Sequence[tuple[str, Any]]] = attrs.field(
        default=lambda item, session: ()
    )
    answer: Callable[[Mapping[str, Any], Sequence[Any]], Any] = attrs.field(
        default=lambda item, results: None
    )
    shows: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    defers: bool = False
    found: Callable[[Sequence[Any]], Sequence[str]] = attrs.field(default=lambda results: ())
