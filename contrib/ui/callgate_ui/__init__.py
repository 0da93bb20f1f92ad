"""callgate-ui: a local, read-only web page over the session store (``callgate ui``).

``create_app(store, token=None)`` is the Starlette app (docs/ui.md); the command serves it
with uvicorn on loopback unless told otherwise, and then only with a token.
"""

from __future__ import annotations

from ._app import PAGE, create_app

__all__ = ["PAGE", "create_app"]
