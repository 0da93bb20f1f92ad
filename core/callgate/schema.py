"""Canonical schemas and their fingerprints (host.md §1): the bytes a schema is known by.

`canonical_schema` sorts keys and ``required`` arrays (recursively) and gives an
object root its ``properties``; `canonical_bytes` is its compact JSON;
`fingerprint` the SHA-256 of those bytes and `short_fingerprint` its first 16
hex digits (the form validation errors name). `contract_entry` is a tool as the
contract shows it (``{name, read_only, description, schema}``, the canonical schema),
`contract_entries` those of several tools, by name.
"""

from ._model.canonical import canonical_bytes, canonical_schema, fingerprint, short_fingerprint
from ._model.contract import contract_entries, contract_entry

__all__ = [
    "canonical_bytes",
    "canonical_schema",
    "contract_entries",
    "contract_entry",
    "fingerprint",
    "short_fingerprint",
]
