"""callgate-ui: a local, read-only web page over the session store (``callgate ui``).

``create_app(store, token=None)`` is the Starlette app (docs/ui.md); the command serves it
with uvicorn on loopback unless told otherwise, and then only with a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._app import PAGE, create_app

__all__ = ["PAGE", "create_app"]


def __getattr__(name: str) -> Any:
    # loaded on first use: the ``ui`` command's entry point imports this package, and
    # every ``callgate`` command loads it (``_app`` imports Starlette and Jinja2)
    if name in __all__:
        from . import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'callgate_ui' has no attribute {name!r}")
