"""A tool schema compiled once: checked against its dialect's metaschema, bounded
(`dialects`), and with the fast "certainly valid" check beside the full validator."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .._model.canonical import canonical_schema
from .fastcheck import compile_fast

if TYPE_CHECKING:  # jsonschema (~35 ms) is imported when the first schema compiles
    import jsonschema.protocols


@attrs.frozen
class Compiled:
    """A tool schema compiled once: its validator, or why it does not compile."""

    validator: jsonschema.protocols.Validator | None
    error: str | None
    short_fingerprint: str
    fast: Callable[[Any], bool] | None = None


def compile_schema(schema: Any, short_fp: str) -> Compiled:
    """Check ``schema`` against the metaschema of the dialect it declares (``$schema``;
    2020-12 when it declares none) and compile it (never raises).

    Refused here, as configuration errors: a ``$ref`` the schema cannot resolve by
    itself (callgate never fetches one) and a ``pattern`` the regex engine cannot
    compile. See `_validation.dialects` for the time budget every pattern runs under.
    """
    import jsonschema

    from . import dialects as _dialects

    try:
        cls = _dialects.validator_class(schema)
        cls.check_schema(schema)
        canonical = canonical_schema(schema)
        outside = _dialects.outside_reference(canonical, cls)
        if outside is not None:
            return Compiled(
                None,
                f"$ref {outside[:200]!r} points outside the schema; "
                "callgate never fetches a schema, so every reference must resolve "
                "within it",
                short_fp,
            )
        problem = _dialects.bad_pattern(canonical)
        if problem is not None:
            return Compiled(None, problem, short_fp)
        validator = cls(canonical, registry=_dialects.empty_registry())
        # The fast check speaks 2020-12; other dialects always take the full validator.
        fast = (
            compile_fast(canonical) if _dialects.dialect_uri(schema) == _dialects.LATEST else None
        )
        return Compiled(validator, None, short_fp, fast)
    except jsonschema.SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.path) if exc.path else "/"
        return Compiled(None, f"{exc.message} at {where}", short_fp)
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:
        return Compiled(None, str(exc) or type(exc).__name__, short_fp)


__all__ = ["Compiled", "compile_schema"]
