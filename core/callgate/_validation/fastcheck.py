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

import operator
import sys
from collections.abc import Callable
from typing import Any

from .patterns import PatternTimeout, search

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$schema",
        # config layering (`_config.layers`) and path keys (`_config.paths`)
        "x-workspace",
        "x-layers",
        "x-kind",
        "x-relative-to",
    }
)
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
    """A bounded match (`_validation.patterns`); out of time is "not certain", for
    jsonschema to judge."""
    try:
        return search(pattern, value)
    except PatternTimeout:
        return False


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _all(checks: list[Check]) -> Check:
    """Every check passes (specialised for the usual one to three: no generator per call)."""
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)
    if len(checks) == 3:
        a, b, c = checks
        return lambda v: a(v) and b(v) and c(v)

    def every(v: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a loop, not all(genexpr): no generator per call
            if not check(v):
                return False
        return True

    return every


def _object(
    props: dict[str, Check] | None,
    required: tuple[str, ...],
    extra: Check | None,
    closed: bool,
    typed: bool = False,
) -> Check:
    """``properties``, ``required`` and ``additionalProperties`` of one object, in one pass
    over the value's keys (a value that is not an object passes: ``type`` judges it; with
    ``typed``, the ``type: object`` beside them, it fails here, in the same call)."""

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return not typed
        for name in required:
            if name not in v:
                return False
        for key, item in v.items():
            sub = props.get(key) if props is not None else None
            if sub is not None:
                if not sub(item):
                    return False
            elif props is None or key not in props:
                if closed:
                    return False
                if extra is not None and not extra(item):
                    return False
        return True

    return check


_BOUNDS = {
    "minimum": operator.ge,
    "maximum": operator.le,
    "exclusiveMinimum": operator.gt,
    "exclusiveMaximum": operator.lt,
}
_LENGTHS = ("minLength", "maxLength")


def _leaf(schema: dict[str, Any]) -> Check | None:
    """The usual leaf (one scalar ``type`` and its own bounds) as one closure: the same
    verdict `_node` builds from a check per keyword, in one call instead of several.
    ``None`` for anything else (`_node` builds it keyword by keyword)."""
    kind = schema.get("type")
    keys = [k for k in schema if k not in _ANNOTATIONS and k != "type"]
    if kind == "boolean" and not keys:
        return _TYPES["boolean"]
    if kind == "string" and all(k in _LENGTHS for k in keys):
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", sys.maxsize)
        if type(lo) is not int or type(hi) is not int:
            return None
        return lambda v: isinstance(v, str) and lo <= len(v) <= hi
    if kind in ("integer", "number") and all(k in _BOUNDS for k in keys):
        bounds = tuple((_BOUNDS[k], schema[k]) for k in keys)
        if not all(_is_number(b) for _op, b in bounds):
            return None
        integer = kind == "integer"

        def number(v: Any) -> bool:
            if isinstance(v, bool) or not isinstance(v, int if integer else int | float):
                return False
            for op, b in bounds:  # noqa: SIM110 - a loop, not all(genexpr): no generator
                if not op(v, b):
                    return False
            return True

        return number
    return None


def _node(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda v: True
    if not isinstance(schema, dict):
        raise _Unsupported
    leaf = _leaf(schema)
    if leaf is not None:
        return leaf
    checks: list[Check] = []
    props: dict[str, Check] | None = None
    required: tuple[str, ...] = ()
    extra: Check | None = None
    closed = False
    shaped = False  # properties, required or additionalProperties seen
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            names = value if isinstance(value, list) else [value]
            if not all(isinstance(n, str) and n in _TYPES for n in names):
                raise _Unsupported
            preds = [_TYPES[n] for n in names]
            checks.append(
                preds[0] if len(preds) == 1 else (lambda v, preds=preds: any(p(v) for p in preds))
            )
        elif key == "properties":
            props = {name: _node(sub) for name, sub in value.items()}
            shaped = True
        elif key == "required":
            required = tuple(value)
            shaped = True
        elif key == "additionalProperties":
            if schema.get("patternProperties"):
                raise _Unsupported
            if value is False:
                closed = True
            elif value is not True:
                extra = _node(value)
            shaped = True
        elif key == "propertyNames":
            names_check = _node(value)
            checks.append(
                lambda v, names=names_check: not isinstance(v, dict) or all(names(k) for k in v)
            )
        elif key == "items":
            item = _node(value)
            checks.append(lambda v, item=item: not isinstance(v, list) or all(item(x) for x in v))
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
            op = {
                "minimum": lambda a, b: a >= b,
                "maximum": lambda a, b: a <= b,
                "exclusiveMinimum": lambda a, b: a > b,
                "exclusiveMaximum": lambda a, b: a < b,
            }[key]
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
    if shaped:
        if checks == [_TYPES["object"]]:  # ``type: object`` and its shape: one call
            return _object(props, required, extra, closed, typed=True)
        checks.append(_object(props, required, extra, closed))
    return _all(checks)
