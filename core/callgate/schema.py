"""Canonical schemas and their fingerprints (host.md §1): the bytes a schema is known by.

`canonical_schema` sorts keys and ``required`` arrays (recursively) and gives an
object root its ``properties``; `canonical_bytes` is its compact JSON;
`fingerprint` the SHA-256 of those bytes and `short_fingerprint` its first 16
hex digits (the form validation errors name).
"""

from ._model.canonical import canonical_bytes, canonical_schema, fingerprint, short_fingerprint

__all__ = ["canonical_bytes", "canonical_schema", "fingerprint", "short_fingerprint"]
