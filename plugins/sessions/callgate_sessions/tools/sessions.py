"""The session tools: ``list_sessions``, ``read_session``, ``history`` (schemas, descriptions,
execute). Parameters follow the reference tools (Reasonix's), in our own words."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext, ToolResult, Violation

from .. import _render
from .._scope import allow_global, find_session, principal, store_of, workspaces

DEFAULT_KINDS = ("user_text", "assistant_text", "tool_input", "tool_error")

def check_history(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    if args["operation"] == "search":
        if "query" not in args:
            return [Violation("/query", "required", "a query for operation \"search\"")]
        return []
    missing = [Violation(f"/{name}", "required", f'{name} for operation "around"')
               for name in ("session", "message_index") if name not in args]
    return missing


def run_list(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    store = store_of(ctx)
    global_ = allow_global(ctx)
    infos = store.sessions(workspace=None if global_ else ctx.workspace.root,
                           limit=args.get("limit", 20), principal=principal(ctx))
    listed = [{"id": i.id, "name": i.name, "started": i.started, "calls": i.calls,
               "workspace": i.workspace, "status": i.status, "preview": i.preview,
               "current": i.id == ctx.session.id} for i in infos]
    return ToolResult.ok(_render.session_list(infos, ctx.session.id, global_),
                         {"sessions": len(infos), "structured_content": {"sessions": listed}})


def run_read(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    store = store_of(ctx)
    info = find_session(ctx, store, args["session"])
    entries = store.entries(info.id)
    text = _render.session_text(info, entries, args.get("max_turns", 50),
                                args.get("show_tool_results", False))
    return ToolResult.ok(text, {"session": info.id, "entries": len(entries)})


def run_history(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    store = store_of(ctx)
    if args["operation"] == "around":
        info = find_session(ctx, store, args["session"])
        index = args["message_index"]
        before, after = args.get("before", 3), args.get("after", 3)
        entries = store.entries(info.id, after=max(0, index - before - 1),
                                before=index + after + 1)
        return ToolResult.ok(_render.around_text(info, entries, index),
                             {"session": info.id, "entries": len(entries)})
    scope = args.get("scope", "project")
    covered = workspaces(ctx, scope)
    hits = store.search(args["query"], workspaces=covered,
                        kinds=args.get("kind") or DEFAULT_KINDS, tool=args.get("tool_name"),
                        limit=args.get("limit", 8), principal=principal(ctx))
    return ToolResult.ok(_render.hits_text(args["query"], hits, ctx.session.id,
                                           covered is None), {"matches": len(hits)})
