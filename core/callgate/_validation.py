"""Argument validation and the recovery feedback the model reads (host.md §4).

The happy path pays for one compiled ``is_valid`` check. Everything else here
(ordered violations, hints, the bounded feedback text) runs only for a call
that is already known to be invalid. Nothing here coerces, unwraps or fills
the caller's arguments: diagnosis only reads them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ._model import ToolResult, Violation

if TYPE_CHECKING:
    import jsonschema

FEEDBACK_LIMIT = 4096
MAX_LISTED = 8
COMPOSITION = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
               "$ref", "$dynamicRef", "unevaluatedProperties")
_RANK = {"json": 0, "type@root": 1, "required": 2, "additionalProperties": 3}


class NotAnObject(Exception):
    """The arguments are not a JSON object; ``what`` says what they were instead."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def decode_arguments(raw: Any) -> dict[str, Any]:
    """The argument object of a call: ``None`` is ``{}``; JSON text (as OpenAI sends it) is
    decoded; anything that is not an object raises `NotAnObject`."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str | bytes):
        try:
            value = json.loads(raw)
        except ValueError:
            raise NotAnObject("text that is not valid JSON") from None
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        raise NotAnObject(f"JSON text holding {_json_type(value)}")
    raise NotAnObject(_json_type(raw))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if value is None:
        return "null"
    return "a value of another kind"


def json_violation(what: str) -> Violation:
    return Violation("/", "json", f"a JSON object of named arguments (got {what})")


# --- schema violations ------------------------------------------------------------


def _pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "/"


def _names(values: Iterable[str]) -> str:
    return ", ".join(sorted(values))


def _expected(err: jsonschema.ValidationError) -> str:
    kw, val = err.validator, err.validator_value
    if kw == "type":
        types = val if isinstance(val, list) else [val]
        return "type " + " or ".join(str(t) for t in types)
    if kw == "enum":
        return "one of: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in val)
    if kw == "const":
        return "the constant " + json.dumps(val, ensure_ascii=False)
    simple = {
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minimum": "a number >= {}",
        "maximum": "a number <= {}",
        "exclusiveMinimum": "a number > {}",
        "exclusiveMaximum": "a number < {}",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "minProperties": "at least {} properties",
        "maxProperties": "at most {} properties",
        "multipleOf": "a multiple of {}",
        "pattern": "a string matching the pattern {}",
        "format": "a string in the {} format",
        "minContains": "at least {} matching items",
        "maxContains": "at most {} matching items",
    }
    if kw in simple:
        return simple[kw].format(val)
    if kw == "uniqueItems":
        return "items that are all different"
    if kw == "oneOf":
        return "exactly one of the allowed forms"
    if kw == "anyOf":
        return "one of the allowed forms"
    if kw == "not":
        return "not the forbidden form"
    if kw == "contains":
        return "at least one item of the required form"
    if kw == "dependentRequired":
        return "the properties each present property depends on"
    if kw == "propertyNames":
        return "property names of the allowed form"
    if kw == "false" or val is False:
        return "nothing here (the schema allows no value)"
    text = json.dumps(val, ensure_ascii=False, sort_keys=True)
    return f'to satisfy "{kw}": {text[:200]}'


def _schema_order(err: jsonschema.ValidationError) -> tuple[Any, ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in err.absolute_schema_path)


def schema_violations(validator: jsonschema.Draft202012Validator,
                      arguments: dict[str, Any]) -> list[Violation]:
    """Every schema violation, merged per (path, keyword) and in host.md §4's order."""
    errors = list(validator.iter_errors(arguments))
    ranked: list[tuple[tuple[Any, ...], Violation]] = []
    merged_required: dict[str, tuple[tuple[Any, ...], set[str]]] = {}
    for err in errors:
        path = _pointer(err.absolute_path)
        kw = str(err.validator)
        order = _schema_order(err)
        if kw == "required":
            present = set(err.instance) if isinstance(err.instance, dict) else set()
            missing = {r for r in err.validator_value if r not in present}
            key, names = merged_required.get(path, (order, set()))
            merged_required[path] = (min(key, order), names | missing)
            continue
        if kw == "additionalProperties":
            declared = set((err.schema or {}).get("properties", {}))
            extra = sorted(set(err.instance) - declared) if isinstance(err.instance, dict) else []
            allowed = _names(declared) if declared else "none"
            expected = f"only declared properties ({allowed}); unexpected: {', '.join(extra)}"
            violation = Violation(path, kw, expected)
        else:
            violation = Violation(path, kw, _expected(err))
        rank = _RANK.get("type@root" if kw == "type" and path == "/" else kw, 9)
        ranked.append(((rank, order), violation))
    for path, (order, names) in merged_required.items():
        violation = Violation(path, "required", f"required properties: {_names(names)}")
        ranked.append(((_RANK["required"], order), violation))
    ranked.sort(key=lambda item: item[0])
    return [v for _, v in ranked]


# --- hints ---------------------------------------------------------------------------


def hints(
    schema: dict[str, Any],
    validator: jsonschema.Draft202012Validator,
    arguments: dict[str, Any],
    violations: list[Violation],
    inner_valid: Callable[[dict[str, Any]], bool] | None = None,
) -> list[str]:
    """Value-free advice for the three common slips; the host acts on none of it."""
    out: list[str] = []
    props = schema.get("properties") or {}
    if (
        set(arguments) == {"arguments"}
        and "arguments" not in props
        and not any(k in schema for k in COMPOSITION)
        and isinstance(arguments["arguments"], dict)
        and validator.is_valid(arguments["arguments"])
        and (inner_valid is None or inner_valid(arguments["arguments"]))
    ):
        out.append('hint: the input is wrapped in one "arguments" object that this tool does not '
                   "declare; remove that wrapper and send its contents as the input itself")
    for name, value in arguments.items():
        want = _json_kinds(props.get(name))
        if not want or not isinstance(value, str):
            continue
        try:
            parsed = json.loads(value)
        except ValueError:
            continue
        kind = "array" if isinstance(parsed, list) else "object" if isinstance(parsed, dict) else ""
        if kind in want:
            out.append(f"hint: /{name} is a string holding JSON; send the {kind} itself, "
                       "not a string")
    unknown = [k for k in arguments if props and k not in props]
    if any(v.keyword == "additionalProperties" for v in violations):
        for key in unknown:
            near = _near_miss(key, list(props))
            if near:
                out.append(f'hint: there is no property "{key}"; did you mean "{near}"?')
    return out


def _json_kinds(prop_schema: Any) -> set[str]:
    if not isinstance(prop_schema, dict):
        return set()
    t = prop_schema.get("type")
    types = set(t) if isinstance(t, list) else {t} if isinstance(t, str) else set()
    return types & {"array", "object"}


def _near_miss(key: str, declared: list[str]) -> str | None:
    lowered = {d.lower(): d for d in declared}
    if key.lower() in lowered:
        return lowered[key.lower()]
    parts = set(key.lower().replace("-", "_").split("_"))
    for d in declared:
        if d.lower() in parts and len(d) >= 3:
            return d
    close = difflib.get_close_matches(key, declared, n=1, cutoff=0.6)
    return close[0] if close else None


# --- feedback text ----------------------------------------------------------------


def signature(tool: str, short_fp: str, category: str) -> str:
    return f"argument_validation:{tool}:{short_fp}:{category}"


def bounded(text: str, limit: int = FEEDBACK_LIMIT) -> str:
    """Cut ``text`` to ``limit`` UTF-8 bytes on a character boundary, with a marker."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    marker = "\n[truncated]"
    cut = raw[: limit - len(marker.encode())].decode("utf-8", errors="ignore")
    return cut + marker


def invalid_result(
    tool: str,
    short_fp: str,
    violations: list[Violation],
    hint_lines: list[str],
    *,
    inside_capability: bool = False,
) -> ToolResult:
    """The unexecuted ``invalid_arguments`` result for a call."""
    category = violations[0].keyword if violations else "schema"
    sig = signature(tool, short_fp, category)
    lines = [f"argument validation failed for {tool} (schema {short_fp}): not executed"]
    for v in violations[:MAX_LISTED]:
        lines.append(f"- {v.path}: {v.keyword}; expected {v.expected}")
    if len(violations) > MAX_LISTED:
        lines.append(f"- ... and {len(violations) - MAX_LISTED} more")
    if inside_capability:
        lines.append(f"These parameters belong inside use_capability.arguments (the input of "
                     f"{tool}); fix them there and call again.")
    else:
        lines.append(f"These parameters belong at the root of {tool}'s input; fix them and "
                     "call again.")
    lines.extend(hint_lines)
    lines.append(f"signature: {sig}")
    text = bounded("\n".join(lines))
    meta = {
        "signature": sig,
        "schema_fingerprint": short_fp,
        "violations": [{"path": v.path, "keyword": v.keyword} for v in violations],
        "executed": False,
    }
    return ToolResult.failure("invalid_arguments", text, sig, meta)


def config_error_result(tool: str, short_fp: str, reason: str) -> ToolResult:
    """The unexecuted result for a tool whose schema does not compile: the host's problem."""
    sig = signature(tool, short_fp, "schema")
    text = bounded(
        f"tool {tool} (schema {short_fp}) has an input schema that does not compile ({reason}); "
        "this is a host configuration problem, not the arguments: not executed\n"
        f"signature: {sig}"
    )
    return ToolResult.failure("config_error", text, sig, {"signature": sig, "executed": False})
