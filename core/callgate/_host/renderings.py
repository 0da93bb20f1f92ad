"""The provider renderings installed: how a host's tools are sent to a model API
(``anthropic``, ``openai-chat``, ``gemini``, ``mcp``, the native ``anthropic-native`` ...).

A rendering is a plugin like a store backend: an object registered under the
``callgate.renderings`` entry-point group by its name (``callgate-providers`` registers the
built-in ones; ``callgate[all]`` installs it), which the command line (``callgate tools
--provider``, ``callgate replay --provider``), `callgate.sync.Session.run_items` and the
``callgate_session(provider=...)`` fixture use. The core renders nothing itself but the
canonical entries (`callgate.schema.contract_entry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .._model import entrypoints as metadata

ENTRY_POINT_GROUP = "callgate.renderings"


class Rendering(Protocol):
    """What a ``callgate.renderings`` entry point names (structural)."""

    #: the rendering's name, as ``--provider`` takes it
    name: str
    #: whether it shows provider-native tool shapes (its raw call items go to `run_items`)
    native: bool
    #: where it is listed among the installed renderings (lowest first)
    position: int

    def surface(self, source: Any) -> list[dict[str, Any]]:
        """The visible tools of a host or a session as this provider defines them."""
        ...

    def shows(self, host: Any) -> list[str]:
        """The hidden tools a session opened for this rendering puts on its surface
        (``open_session(show=...)``): what its faces run directly; ``[]`` for most."""
        ...

    async def run_items(self, session: Any, items: Sequence[Any]) -> list[Any]:
        """A native rendering's raw call items in (one model turn), its raw result items
        out, every call run through the session's pipeline."""
        ...


_installed: dict[str, Rendering] | None = None


def installed() -> dict[str, Rendering]:
    """Every installed rendering by name, in listing order (loaded once per process)."""
    global _installed
    if _installed is None:
        found: dict[str, Rendering] = {}
        for ep in metadata.entry_points(ENTRY_POINT_GROUP):
            found.setdefault(ep.name, ep.load())
        _installed = dict(sorted(found.items(), key=lambda item: (item[1].position, item[0])))
    return _installed


def rendering(name: str) -> Rendering:
    """The installed rendering ``name``; `ValueError` naming the installed ones if none."""
    found = installed().get(name)
    if found is None:
        names = ", ".join(installed())
        if not names:
            raise ValueError(
                f"unknown provider {name!r}: no provider renderings are installed "
                "(install callgate-providers, which callgate[all] includes)"
            )
        raise ValueError(f"unknown provider {name!r}; use one of {names}")
    return found


def names(*, native: bool | None = None) -> list[str]:
    """The installed renderings' names (only the native ones, or only the others)."""
    return [n for n, r in installed().items() if native is None or r.native == native]
