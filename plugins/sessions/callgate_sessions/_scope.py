"""Which recorded sessions a session's tools may see, and the store they read.

Only the calling session's principal's sessions, ever (``session.principal``: the
operating-system user, or the bearer token's name under ``callgate serve --http``).
Within them, ``project`` (the default) is the sessions of the calling session's
workspace; ``global`` is every workspace's, allowed only with ``[sessions]
allow_global_history = true`` in the user's own config. A session outside the scope is
answered exactly as an unknown one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callgate import ToolContext, ToolError
from callgate.store import StoreError, visible_to

if TYPE_CHECKING:
    from callgate.store import SessionInfo


def allow_global(ctx: ToolContext) -> bool:
    return bool(ctx.host.config("sessions").get("allow_global_history", False))


def principal(ctx: ToolContext) -> str:
    """Whose sessions the tools answer with: the calling session's principal."""
    return str(ctx.session.principal)


def store_of(ctx: ToolContext) -> Any:
    """The store, with this process's own recent records committed (so the current session
    reads itself up to its last batch)."""
    try:
        ctx.session.flush()
        return ctx.host.store
    except StoreError as exc:
        raise ToolError("tool_error", f"the session store cannot be read: {exc}",
                        "SESSIONS_STORE_UNAVAILABLE") from None


def workspaces(ctx: ToolContext, scope: str) -> list[str] | None:
    """The workspaces ``scope`` covers (``None``: every one), or a refusal."""
    if scope == "global":
        if not allow_global(ctx):
            raise ToolError("blocked", 'scope "global" is not allowed here: only this '
                            "workspace's sessions can be searched ([sessions] "
                            "allow_global_history = true allows every workspace's)",
                            "SESSIONS_GLOBAL_DISALLOWED")
        return None
    return [ctx.workspace.root]


def find_session(ctx: ToolContext, store: Any, key: str) -> SessionInfo:
    """The session ``key`` names, if the scope allows it; else "not found" (whether it
    exists elsewhere is not said)."""
    info = store.session(key, principal=principal(ctx))
    if info is None or not visible_to(info.principal, principal(ctx)) or (
            info.workspace != ctx.workspace.root and not allow_global(ctx)):
        raise ToolError("not_found", f'no recorded session "{key}" in this workspace\'s '
                        "history; list_sessions shows the sessions you can read",
                        "SESSIONS_NOT_FOUND")
    return info
