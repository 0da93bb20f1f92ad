"""A fast "certainly valid" check for the common subset of tool schemas.

Validation runs on every call, and the happy path should not pay for the
general machinery. For schemas built only from the keywords below, this
compiles a small closure that returns ``True`` when the arguments are
certainly valid. Anything it is unsure of (a float for an integer, an enum of
mixed types, a keyword outside the subset) returns ``False``, and the call is
then judged by ``jsonschema`` itself, which also produces every diagnostic.
So this can only save time, never accept what ``jsonschema`` would refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._patterns import PatternTimeout, search

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly", "format", "$schema",
                          "x-workspace", "x-layers"})  # the last two: config layering
_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


class _Unsupported(Exception):
    pass


def compile_fast(schema: Any) -> Check | None:
    """The certainly-valid check of ``schema``, or ``None`` if it leaves the subset."""
    try:
        return _node(schema)
    except (_Unsupported, TypeError):
        return None


def _matches(pattern: str, value: str) -> bool:
    """A bounded match (`_patterns`); out of time is "not certain", for jsonschema to judge."""
    try:
        return search(pattern, value)
    except PatternTimeout:
        return False


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _node(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda v: True
    if not isinstance(schema, dict):
        raise _Unsupported
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            names = value if isinstance(value, list) else [value]
            if not all(isinstance(n, str) and n in _TYPES for n in names):
                raise _Unsupported
            preds = [_TYPES[n] for n in names]
            checks.append(lambda v, preds=preds: any(p(v) for p in preds))
        elif key == "properties":
            props = {name: _node(sub) for name, sub in value.items()}
            checks.append(lambda v, props=props: not isinstance(v, dict) or all(
                props[k](v[k]) for k in props if k in v))
        elif key == "required":
            names = tuple(value)
            checks.append(lambda v, names=names: not isinstance(v, dict) or all(
                n in v for n in names))
        elif key == "additionalProperties":
            declared = frozenset(schema.get("properties", {}))
            if schema.get("patternProperties"):
                raise _Unsupported
            if value is False:
                checks.append(lambda v, d=declared: not isinstance(v, dict) or all(
                    k in d for k in v))
            elif value is not True:
                extra = _node(value)
                checks.append(lambda v, d=declared, e=extra: not isinstance(v, dict) or all(
                    e(v[k]) for k in v if k not in d))
        elif key == "propertyNames":
            names = _node(value)
            checks.append(lambda v, names=names: not isinstance(v, dict) or all(
                names(k) for k in v))
        elif key == "items":
            item = _node(value)
            checks.append(lambda v, item=item: not isinstance(v, list) or all(
                item(x) for x in v))
        elif key in ("minLength", "maxLength"):
            n = int(value)
            if key == "minLength":
                checks.append(lambda v, n=n: not isinstance(v, str) or len(v) >= n)
            else:
                checks.append(lambda v, n=n: not isinstance(v, str) or len(v) <= n)
        elif key in ("minItems", "maxItems"):
            n = int(value)
            if key == "minItems":
                checks.append(lambda v, n=n: not isinstance(v, list) or len(v) >= n)
            else:
                checks.append(lambda v, n=n: not isinstance(v, list) or len(v) <= n)
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if not _is_number(value):
                raise _Unsupported
            op = {"minimum": lambda a, b: a >= b, "maximum": lambda a, b: a <= b,
                  "exclusiveMinimum": lambda a, b: a > b,
                  "exclusiveMaximum": lambda a, b: a < b}[key]
            checks.append(lambda v, b=value, op=op: not _is_number(v) or op(v, b))
        elif key == "pattern":
            if not isinstance(value, str):
                raise _Unsupported
            checks.append(lambda v, p=value: not isinstance(v, str) or _matches(p, v))
        elif key == "enum":
            if not value or not all(isinstance(x, str) for x in value):
                raise _Unsupported
            allowed = frozenset(value)
            checks.append(lambda v, a=allowed: isinstance(v, str) and v in a)
        elif key == "uniqueItems":
            if value:
                raise _Unsupported
        else:
            raise _Unsupported
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)
