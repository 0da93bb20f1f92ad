"""Which JSON Schema dialect validates a tool schema, and what callgate bounds in all of them.

A schema names its dialect with ``$schema``: MCP servers built with
zod-to-json-schema send draft-07 (tuple ``items: [...]``), older ones draft-04
(boolean ``exclusiveMinimum``), some 2019-09. Such a schema is checked and
validated as its own dialect (jsonschema's ``validator_for``); a schema that
names none, or a dialect jsonschema does not know, is 2020-12.

Every dialect's validator is extended the same way:

- ``pattern``, ``patternProperties`` and ``additionalProperties`` match with
  `_validation.patterns` (a time budget per argument check), never plain ``re``;
- nothing is ever fetched: validators get a registry that holds only the
  metaschemas jsonschema ships, and `outside_reference` finds a ``$ref`` the
  schema cannot resolve by itself, which makes the schema a configuration
  error at compile time (jsonschema's default would download it).
"""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .patterns import PatternTimeout, compiled, search

#: ``$schema`` paths on json-schema.org (any scheme, with or without ``#``) by dialect.
_KNOWN = {
    "/draft-03/schema": "http://json-schema.org/draft-03/schema#",
    "/draft-04/schema": "http://json-schema.org/draft-04/schema#",
    "/draft-06/schema": "http://json-schema.org/draft-06/schema#",
    "/draft-07/schema": "http://json-schema.org/draft-07/schema#",
    "/draft/2019-09/schema": "https://json-schema.org/draft/2019-09/schema",
    "/draft/2020-12/schema": "https://json-schema.org/draft/2020-12/schema",
}
LATEST = _KNOWN["/draft/2020-12/schema"]
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def dialect_uri(schema: Any) -> str:
    """The metaschema URI ``schema`` declares, normalised; 2020-12 when it declares none we know."""
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if isinstance(declared, str):
        parts = urllib.parse.urlsplit(declared)
        if parts.netloc in ("json-schema.org", "www.json-schema.org") and parts.path in _KNOWN:
            return _KNOWN[parts.path]
    return LATEST


def validator_class(schema: Any) -> Any:
    """The bounded validator class of the dialect ``schema`` declares."""
    return _bounded(dialect_uri(schema))


@functools.cache
def _bounded(uri: str) -> Any:
    import jsonschema.validators

    base = jsonschema.validators.validator_for(
        {"$schema": uri}, default=jsonschema.Draft202012Validator
    )
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    return jsonschema.validators.extend(
        base, {k: v for k, v in keywords.items() if k in base.VALIDATORS}
    )


def empty_registry() -> Any:
    """A registry that resolves nothing beyond the schema itself and never retrieves."""
    import referencing

    return referencing.Registry()


# --- references --------------------------------------------------------------------------


def outside_reference(schema: Any, cls: Any) -> str | None:
    """The first ``$ref`` in ``schema`` that points outside it (``None`` when all resolve)."""
    import referencing
    import referencing.exceptions
    import referencing.jsonschema
    from jsonschema_specifications import REGISTRY

    specification = referencing.jsonschema.specification_with(
        cls.ID_OF(cls.META_SCHEMA) or "", default=referencing.jsonschema.DRAFT202012
    )
    root = specification.create_resource(schema)
    registry = REGISTRY.combine(referencing.Registry())
    stack = [(root, registry.resolver_with_root(root))]
    while stack:
        resource, resolver = stack.pop()
        contents = resource.contents
        if isinstance(contents, dict):
            ref = contents.get("$ref")
            if isinstance(ref, str):
                try:
                    resolver.lookup(ref)
                except referencing.exceptions.Unresolvable:
                    return ref
        for sub in resource.subresources():
            stack.append((sub, resolver.in_subresource(sub)))
    return None


def patterns_in(schema: Any) -> Iterator[str]:
    """Every ``pattern`` and ``patternProperties`` regex in ``schema`` (data keywords skipped)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                yield value
            elif key == "patternProperties" and isinstance(value, dict):
                yield from (k for k in value if isinstance(k, str))
            stack.append(value)


def bad_pattern(schema: Any) -> str | None:
    """Why a pattern of ``schema`` does not compile in the engine that will run it."""
    import regex

    for pattern in patterns_in(schema):
        try:
            compiled(pattern)
        except regex.error as exc:
            return f"pattern {pattern[:100]!r} does not compile ({exc})"
    return None


# --- the bounded keywords ------------------------------------------------------------------


class PatternBudgetError(Exception):
    """Marker mixed into the ValidationError a pattern yields when its budget ran out."""


@functools.cache
def _undecided_class() -> Any:
    from jsonschema import ValidationError

    class Undecided(ValidationError, PatternBudgetError):
        """A pattern check that ran out of time: the value is neither valid nor invalid."""

    return Undecided


def _budget_error(pattern: str) -> Any:
    return _undecided_class()(f"matching {pattern[:100]!r} ran out of its time budget")


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        matched = search(pattern, instance)
    except PatternTimeout:
        yield _budget_error(pattern)
        return
    if not matched:
        yield ValidationError(f"the value does not match {pattern!r}")


def _matching(patterns: Any, key: str) -> Iterator[str]:
    for pattern in patterns:
        if search(pattern, key):
            yield pattern


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for key, value in instance.items():
        try:
            matched = list(_matching(patterns, key))
        except PatternTimeout as exc:
            yield _budget_error(str(exc))
            return
        for pattern in matched:
            yield from validator.descend(value, patterns[pattern], path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, extra_schema: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = []
    for key in instance:
        if key in declared:
            continue
        try:
            if patterns and next(_matching(patterns, key), None) is not None:
                continue
        except PatternTimeout as exc:
            yield _budget_error(str(exc))
            return
        extras.append(key)
    if validator.is_type(extra_schema, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra_schema, path=key)
    elif not extra_schema and extras:
        yield ValidationError(f"{len(extras)} additional properties are not allowed")


__all__ = [
    "LATEST",
    "PatternBudgetError",
    "bad_pattern",
    "dialect_uri",
    "empty_registry",
    "outside_reference",
    "patterns_in",
    "validator_class",
]
