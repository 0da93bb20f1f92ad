"""The memory tools: ``remember``, ``forget``, ``memory`` (schemas, descriptions, execute)."""

from __future__ import annotations

import time
from typing import Any

from callgate import ToolContext, ToolError, ToolResult

from .._keys import MEMORY
from .._render import render_list, render_read, render_search
from .specs import DEFAULT_LIMIT


def _store(ctx: ToolContext) -> Any:
    return ctx.session.extension(MEMORY).store


def run_remember(ctx: ToolContext, args: dict[str, Any]) -> str:
    saved = _store(ctx).remember(args, now=time.time())
    fact = saved.fact
    verb = "Saved new" if saved.created else "Updated"
    extra = ", pinned" if fact.pinned else ""
    if fact.expires_at:
        extra += f", expires {fact.expires_at}"
    return (f"{verb} memory {fact.ref}: id={fact.id} revision={fact.revision} "
            f"scope={fact.scope} type={fact.type}{extra}")


def run_forget(ctx: ToolContext, args: dict[str, Any]) -> str:
    gone = _store(ctx).forget(args["name"], now=time.time())
    if gone is None:
        return f"No memory named {args['name']!r}; nothing to forget."
    return (f"Forgot {gone.ref}: archived as {gone.archived_as} in the {gone.ref.split('/')[0]} "
            "store and removed from the index.")


def _fact_data(fact: Any, *, body: bool = False) -> dict[str, Any]:
    data = {"ref": fact.ref, "id": fact.id, "revision": fact.revision, "scope": fact.scope,
            "type": fact.type, "title": fact.title, "description": fact.description,
            "pinned": bool(fact.pinned)}
    if body:
        data["body"] = fact.body
    return data


def run_memory(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    store, now = _store(ctx), time.time()
    operation = args["operation"]
    if operation == "search":
        query = (args.get("query") or "").strip()
        if not query:
            raise ToolError("invalid_arguments", "search needs query: the words to look for",
                            "MEMORY_NO_QUERY")
        hits = store.search(query, now=now, limit=args.get("limit", DEFAULT_LIMIT),
                            scope=args.get("scope"), type_=args.get("type"))
        found = [{**_fact_data(h.fact), "snippet": h.snippet} for h in hits]
        return ToolResult.ok(render_search(query, hits),
                             {"structured_content": {"operation": "search", "facts": found}})
    if operation == "read":
        name = (args.get("name") or "").strip()
        if not name:
            raise ToolError("invalid_arguments", "read needs name: an id, project/<name>, "
                            "global/<name> or a bare name (memory list shows them)",
                            "MEMORY_NO_NAME")
        fact = store.read(name, now=now)
        return ToolResult.ok(render_read(fact), {"structured_content": {
            "operation": "read", "facts": [_fact_data(fact, body=True)]}})
    facts = store.visible(now=now, scope=args.get("scope"), type_=args.get("type"))
    return ToolResult.ok(render_list(facts, store.problems(args.get("scope"))), {
        "structured_content": {"operation": "list", "facts": [_fact_data(f) for f in facts]}})
