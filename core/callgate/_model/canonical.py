"""Canonical JSON Schema bytes and their fingerprints (host.md §1).

One canonical form per tool schema: sorted keys, compact separators,
``required`` arrays sorted at every depth, and an object root that always
has ``properties``. Provider renderings and the contract doc start from it;
the fingerprint (SHA-256 of the canonical bytes) names a schema version in
validation errors.
"""

from __future__ import annotations

import json
from typing import Any


def _sorted_required(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _sorted_required(v) for k, v in node.items()}
        req = out.get("required")
        if isinstance(req, list) and all(isinstance(r, str) for r in req):
            out["required"] = sorted(req)
        return out
    if isinstance(node, list):
        return [_sorted_required(v) for v in node]
    return node


def canonical_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The canonical form of a tool schema, as a new dict (idempotent)."""
    out = _sorted_required(schema)
    if out.get("type") == "object" and "properties" not in out:
        out["properties"] = {}
    return json.loads(canonical_bytes_of(out))


def canonical_bytes_of(value: Any) -> bytes:
    """Compact, key-sorted JSON bytes of ``value`` (no further normalisation)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def canonical_bytes(schema: dict[str, Any]) -> bytes:
    return canonical_bytes_of(canonical_schema(schema))


def fingerprint(schema: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical schema bytes."""
    import hashlib  # when a fingerprint is asked for (a listing boot needs none)

    return hashlib.sha256(canonical_bytes(schema)).hexdigest()


def short_fingerprint(schema: dict[str, Any]) -> str:
    """The first 16 hex digits of `fingerprint`."""
    return fingerprint(schema)[:16]
