"""What callgate knows about MCP tools: live listings and the on-disk schema cache.

The cache lets ``inspect`` and ``search`` answer before a server's first
connect. It is keyed by the server's identity, written atomically after every
successful listing, never holds env values, and an unreadable or unknown file
counts as absent (capability.md §5 "Schema cache").
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs
from callgate import ToolSpec
from callgate.files import replace_file
from callgate.schema import canonical_bytes, short_fingerprint

VERSION = 1


@attrs.frozen
class McpToolInfo:
    """One MCP tool as listed: name, description, input schema and safety hints."""

    name: str
    description: str
    input_schema: Any
    annotations: Mapping[str, Any] = attrs.field(factory=dict)
    #: what was worked out once about this listing's schema (its fingerprint, and the
    #: verdict of the last host that compiled it): a listed tool is called many times, and
    #: each took a canonical serialisation of the schema per call (issue 38)
    _memo: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    @property
    def read_only(self) -> bool:
        return self.annotations.get("readOnlyHint") is True and not self.destructive

    @property
    def destructive(self) -> bool:
        return self.annotations.get("destructiveHint") is True

    def schema_error(self, host: Any) -> str | None:
        """Why the input schema does not compile, or ``None``: ``host`` compiles it as it
        would for a call (the dialect its ``$schema`` declares, references that stay
        inside it, patterns the bounded engine takes), and remembers the verdict (for the
        last host that asked: the verdict depends on the host's dialects and limits)."""
        known = self._memo.get("schema_error")
        if known is not None and known[0] is host:
            return known[1]  # type: ignore[no-any-return]
        verdict = schema_error(host, self.input_schema)
        self._memo["schema_error"] = (host, verdict)
        return verdict

    @property
    def fingerprint(self) -> str:
        known = self._memo.get("fingerprint")
        if known is None:
            known = self._memo["fingerprint"] = short_fingerprint(self.input_schema) \
                if isinstance(self.input_schema, dict) else "0" * 16
        return known  # type: ignore[no-any-return]

    @property
    def argument_names(self) -> list[str]:
        props = self.input_schema.get("properties") if isinstance(self.input_schema, dict) \
            else None
        return sorted(props) if isinstance(props, dict) else []

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema, "annotations": dict(self.annotations)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> McpToolInfo:
        annotations = doc.get("annotations") or {}
        return cls(str(doc["name"]), str(doc.get("description") or ""), doc.get("input_schema"),
                   dict(annotations) if isinstance(annotations, Mapping) else {})


def schema_error(host: Any, schema: Any) -> str | None:
    """Why ``schema`` cannot validate calls on ``host`` (``None`` when it can)."""
    if not isinstance(schema, dict):
        return "the input schema is not a JSON object"
    try:
        canonical_bytes(schema)
    except (TypeError, ValueError):
        return "the input schema is not plain JSON"
    return host.compiled(ToolSpec(name="mcp_tool", description="", schema=schema)).error


@attrs.frozen
class CachedServer:
    """A cache file's content: when it was saved, the server's info, its tools."""

    saved_at: str
    server_info: Mapping[str, Any]
    tools: tuple[McpToolInfo, ...]


class SchemaCache:
    """``<cache_dir>/mcp/<identity>.json`` files, read through a small memo."""

    def __init__(self, directory: str) -> None:
        self.directory = os.path.join(directory, "mcp")
        self._memo: dict[str, tuple[tuple[int, int], CachedServer]] = {}
        self._lock = threading.Lock()

    def path(self, identity: str) -> str:
        return os.path.join(self.directory, f"{identity}.json")

    def load(self, identity: str) -> CachedServer | None:
        path = self.path(identity)
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        with self._lock:
            memo = self._memo.get(identity)
            if memo is not None and memo[0] == key:
                return memo[1]
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
            if not isinstance(doc, dict) or doc.get("version") != VERSION:
                return None
            tools = tuple(McpToolInfo.from_json(t) for t in doc.get("tools") or [])
            info = doc.get("server_info") if isinstance(doc.get("server_info"), dict) else {}
            entry = CachedServer(str(doc.get("saved_at", "")), info, tools)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        with self._lock:
            self._memo[identity] = (key, entry)
        return entry

    def save(self, identity: str, server: str, server_info: Mapping[str, Any],
             tools: list[McpToolInfo]) -> None:
        doc = {
            "version": VERSION,
            "server": server,
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "server_info": dict(server_info),
            "tools": [t.to_json() for t in tools],
        }
        data = json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1).encode()
        os.makedirs(self.directory, exist_ok=True)
        replace_file(self.path(identity), data, mode=0o600)
