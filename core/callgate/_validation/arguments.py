"""Argument validation and the recovery feedback the model reads (host.md §4).

The happy path pays for one compiled ``is_valid`` check. Everything else here
(ordered violations, hints, the bounded feedback text) runs only for a call
that is already known to be invalid. Nothing here coerces, unwraps or fills
the caller's arguments: diagnosis only reads them.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._model.values import ToolResult, Violation
from .._text.textio import lone_surrogate
from .patterns import PATTERN_BUDGET_S, pattern_budget

if TYPE_CHECKING:
    import jsonschema
    import jsonschema.protocols

    from .._model.spec import ToolSpec
    from .compiled import Compiled

FEEDBACK_LIMIT = 4096
MAX_LISTED = 8
#: Deepest nesting of arrays and objects an argument object may have. Real tool inputs
#: stay far below it; deeper input would exhaust the recursion of the JSON encoder,
#: jsonschema or the tool itself.
MAX_DEPTH = 64
#: Longest property name or JSON pointer the feedback shows in full (middle-clipped beyond).
MAX_NAME_CHARS = 80
MAX_POINTER_CHARS = 200
MAX_EXPECTED_CHARS = 600
MAX_NAMES_LISTED = 24
log = logging.getLogger("callgate")
COMPOSITION = (
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "$ref",
    "$dynamicRef",
    "unevaluatedProperties",
)
_RANK = {"json": 0, "type@root": 1, "required": 2, "additionalProperties": 3}


class NotAnObject(Exception):
    """The arguments are not a JSON object; ``what`` says what they were instead."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def decode_arguments(raw: Any) -> dict[str, Any]:
    """The argument object of a call: ``None`` is ``{}``; JSON text (as OpenAI sends it) is
    decoded; anything that is not an object raises `NotAnObject`, and so does an object
    nested deeper than `MAX_DEPTH` or holding a lone surrogate (not Unicode text)."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        value = raw
    elif isinstance(raw, str | bytes):
        value = _decode_text(raw)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise NotAnObject(f"JSON text holding {_json_type(value)}")
    else:
        raise NotAnObject(_json_type(raw))
    problem = shape_problem(value)
    if problem is not None:
        raise NotAnObject(problem)
    return value


def _decode_text(raw: str | bytes) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        raise NotAnObject(f"text that is not valid JSON: {exc.msg} at {where}") from None
    except RecursionError:
        raise NotAnObject(f"JSON text nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # bytes that are not UTF-8
        raise NotAnObject("text that is not valid UTF-8 JSON") from None


#: the exact types the flat fast path of `shape_problem` passes without a look inside
_SCALARS = frozenset({int, float, bool, type(None)})


def shape_problem(value: Any) -> str | None:
    """Why a decoded argument object cannot be checked safely, or ``None``: nesting deeper
    than `MAX_DEPTH`, or a string (value or name) holding a lone surrogate."""
    if type(value) is dict:  # the usual call: a flat object of ASCII names and scalars
        for key, item in value.items():
            kind = type(item)
            if type(key) is not str or not key.isascii():
                break
            if kind is str:
                if not item.isascii():
                    break
            elif kind not in _SCALARS:  # containers (and subclasses) get the full scan
                break
        else:
            return None
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, dict):
            items: Iterable[tuple[Any, Any]] = node.items()
        elif isinstance(node, list | tuple):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_DEPTH:
            return f"an object nested deeper than {MAX_DEPTH} levels"
        for key, item in items:
            if isinstance(key, str) and lone_surrogate(key):
                return f"a property name that is not Unicode text at {_shown_pointer(where)}"
            if isinstance(item, str):
                if lone_surrogate(item):
                    return (
                        "a string holding a lone surrogate (not Unicode text) at "
                        f"{_shown_pointer((*where, key))}"
                    )
            elif isinstance(item, dict | list | tuple):
                stack.append((item, depth + 1, (*where, key)))
    return None


def _shown_pointer(path: tuple[Any, ...]) -> str:
    pointer = _pointer(path).encode("ascii", "backslashreplace").decode("ascii")
    return _clip(pointer, MAX_POINTER_CHARS)


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


def _clip(text: str, limit: int) -> str:
    """``text``, middle-clipped to ``limit`` characters with a marker that keeps both ends."""
    if len(text) <= limit:
        return text
    keep = max(limit - 1, 2)
    return text[: keep - keep // 2] + "…" + text[len(text) - keep // 2 :]


def _names(values: Iterable[str]) -> str:
    """Property names for the feedback: sorted, each clipped, at most `MAX_NAMES_LISTED`."""
    names = sorted(str(v) for v in values)
    shown = [_clip(n, MAX_NAME_CHARS) for n in names[:MAX_NAMES_LISTED]]
    if len(names) > MAX_NAMES_LISTED:
        shown.append(f"and {len(names) - MAX_NAMES_LISTED} more")
    return ", ".join(shown)


def _expected(err: jsonschema.ValidationError) -> str:
    from .dialects import PatternBudgetError

    kw: Any = err.validator
    val: Any = err.validator_value
    if isinstance(err, PatternBudgetError):
        return (
            f"a value the schema's pattern can be checked against within "
            f"{PATTERN_BUDGET_S:g} s (matching ran out of time; send a shorter or simpler "
            "value)"
        )
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
        return _clip(simple[kw].format(val), MAX_EXPECTED_CHARS)
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
    return f'to satisfy "{_clip(str(kw), MAX_NAME_CHARS)}": {text[:200]}'


def _schema_order(err: jsonschema.ValidationError) -> tuple[Any, ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in err.absolute_schema_path)


def schema_violations(
    validator: jsonschema.protocols.Validator, arguments: dict[str, Any]
) -> list[Violation]:
    """Every schema violation, merged per (path, keyword) and in host.md §4's order."""
    errors = list(validator.iter_errors(arguments))
    ranked: list[tuple[tuple[Any, ...], Violation]] = []
    merged_required: dict[str, tuple[tuple[Any, ...], set[str]]] = {}
    for err in errors:
        path = _clip(_pointer(err.absolute_path), MAX_POINTER_CHARS)
        kw = str(err.validator)
        order = _schema_order(err)
        if kw == "required":
            present = set(err.instance) if isinstance(err.instance, dict) else set()
            required: Any = err.validator_value
            missing = {r for r in required if r not in present}
            key, names = merged_required.get(path, (order, set()))
            merged_required[path] = (min(key, order), names | missing)
            continue
        if kw == "additionalProperties":
            schema: Any = err.schema
            declared = set((schema if isinstance(schema, dict) else {}).get("properties", {}))
            extra = sorted(set(err.instance) - declared) if isinstance(err.instance, dict) else []
            allowed = _names(declared) if declared else "none"
            expected = f"only declared properties ({allowed}); unexpected: {_names(extra)}"
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
    validator: jsonschema.protocols.Validator,
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
        out.append(
            'hint: the input is wrapped in one "arguments" object that this tool does not '
            "declare; remove that wrapper and send its contents as the input itself"
        )
    for name, value in arguments.items():
        want = _json_kinds(props.get(name))
        if not want or not isinstance(value, str):
            continue
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            continue
        kind = "array" if isinstance(parsed, list) else "object" if isinstance(parsed, dict) else ""
        if kind in want:
            out.append(
                f"hint: /{_clip(name, MAX_NAME_CHARS)} is a string holding JSON; send "
                f"the {kind} itself, not a string"
            )
    unknown = [k for k in arguments if props and k not in props]
    if any(v.keyword == "additionalProperties" for v in violations):
        for key in unknown[:MAX_NAMES_LISTED]:
            near = _near_miss(key, list(props)) if len(key) <= MAX_POINTER_CHARS else None
            if near:
                out.append(
                    f'hint: there is no property "{_clip(key, MAX_NAME_CHARS)}"; did you '
                    f'mean "{_clip(near, MAX_NAME_CHARS)}"?'
                )
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


def placement_line(tool: str, inside: str | None, json_problem: bool) -> str:
    """Where the parameters belong (host.md §4): the line the feedback always keeps.
    ``inside`` says where a proxy's call holds them (``ProxyRoute.arguments``, e.g.
    ``inside use_capability.arguments``); ``None``: at the root of the tool's input."""
    if json_problem:
        where = f"{inside} (the input of {tool})" if inside else f"{tool}'s input"
        return (
            f"Send {where} as one JSON object whose keys are the parameters; fix it and call again."
        )
    if inside:
        return (
            f"These parameters belong {inside} (the input of {tool}); fix them there and "
            "call again."
        )
    return f"These parameters belong at the root of {tool}'s input; fix them and call again."


def feedback_text(
    head: str,
    body: list[str],
    placement: str,
    hint_lines: list[str],
    sig_line: str,
    limit: int = FEEDBACK_LIMIT,
) -> str:
    """The feedback lines within ``limit`` UTF-8 bytes. The first line, the placement line
    and the signature always stay; violation and hint lines are dropped from the end (and
    the last one kept cut on a character boundary) with a ``[truncated]`` marker."""
    marker = "[truncated]"
    head, placement = _clip(head, 1200), _clip(placement, 600)
    fixed = len("\n".join([head, placement, sig_line]).encode())
    room = limit - fixed - len(marker) - 1
    kept: list[list[str]] = [[], []]
    cut = False
    for part, lines in enumerate((body, hint_lines)):
        for line in lines:
            cost = len(line.encode()) + 1
            if not cut and cost <= room:
                kept[part].append(line)
                room -= cost
            elif not cut:
                if room > 40:
                    kept[part].append(line.encode()[: room - 1].decode("utf-8", "ignore"))
                kept[part].append(marker)
                cut = True
    middle = [placement] if placement else []
    return "\n".join([head, *kept[0], *middle, *kept[1], sig_line])


def invalid_result(
    tool: str,
    short_fp: str,
    violations: list[Violation],
    hint_lines: list[str],
    *,
    inside: str | None = None,
    placement: str | None = None,
) -> ToolResult:
    """The unexecuted ``invalid_arguments`` result for a call (``placement`` replaces the
    usual line saying where the parameters belong)."""
    category = violations[0].keyword if violations else "schema"
    sig = signature(tool, short_fp, category)
    head = f"argument validation failed for {tool} (schema {short_fp}): not executed"
    body = [
        f"- {v.path}: {v.keyword}; expected {_clip(v.expected, MAX_EXPECTED_CHARS)}"
        for v in violations[:MAX_LISTED]
    ]
    if len(violations) > MAX_LISTED:
        body.append(f"- ... and {len(violations) - MAX_LISTED} more")
    if placement is None:
        placement = placement_line(tool, inside, category == "json")
    text = feedback_text(
        head, body, placement, [_clip(h, 800) for h in hint_lines], f"signature: {sig}"
    )
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
    text = feedback_text(
        f"tool {tool} (schema {short_fp}) has an input schema that does not compile "
        f"({_clip(reason, 1000)}); this is a host configuration problem, not the arguments: "
        "not executed",
        [],
        "",
        [],
        f"signature: {sig}",
    )
    return ToolResult.failure("config_error", text, sig, {"signature": sig, "executed": False})


# --- one argument check, start to end ------------------------------------------------


def integral_numbers(schema: Any, value: Any, root: Any = None, depth: int = 0) -> Any:
    """``value`` with each integral float at a place ``schema`` types as ``integer`` made an
    ``int`` (new containers where something changed; the input is never modified).

    JSON has one number type and JSON Schema counts ``1.0`` as the integer 1, so a
    provider that sends every number as a float (Gemini does) gets a tool that sees
    ``1``, never a float it did not declare. Follows ``properties``, ``items``,
    ``prefixItems``, ``additionalProperties``, ``allOf`` and local ``$ref``s.
    """
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        value = integral_numbers(_local(root, ref[1:]), value, root, depth + 1)
    for sub in schema.get("allOf") or ():
        value = integral_numbers(sub, value, root, depth + 1)
    if isinstance(value, float):
        t = schema.get("type")
        types = {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()
        if "integer" in types and "number" not in types and value.is_integer():
            return int(value)
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        out: dict[str, Any] | None = None
        for key, item in value.items():
            sub = props.get(key) if key in props else extra if isinstance(extra, dict) else None
            new = integral_numbers(sub, item, root, depth + 1) if sub is not None else item
            if new is not item:
                out = dict(value) if out is None else out
                out[key] = new
        return value if out is None else out
    if isinstance(value, list):
        items, prefix = schema.get("items"), schema.get("prefixItems")
        if isinstance(items, list):  # draft-07 tuple form
            prefix, items = items, schema.get("additionalItems")
        prefix = prefix if isinstance(prefix, list) else []
        changed = False
        new_list = []
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items if isinstance(items, dict) else None
            new = integral_numbers(sub, item, root, depth + 1) if sub is not None else item
            changed = changed or new is not item
            new_list.append(new)
        return new_list if changed else value
    return value


def _local(root: Any, pointer: str) -> Any:
    node = root
    for part in pointer.split("/")[1:] if pointer else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _too_complex(what: str) -> Violation:
    return Violation("/", "json", f"arguments simple enough to check ({what})")


def check_call(
    spec: ToolSpec,
    compiled: Compiled,
    raw: Any,
    *,
    plugin_violations: Callable[[dict[str, Any]], list[Violation]],
    count: Callable[[str], None],
    inside: str | None = None,
    misplaced: Callable[[dict[str, Any]], str | None] | None = None,
) -> tuple[dict[str, Any] | None, ToolResult | None]:
    """Validate one call's raw arguments (host.md §4): ``(arguments, None)`` when valid,
    else ``(None, unexecuted result)``. Never raises for anything the caller sent.

    The schema check and the hints share one pattern time budget. Arguments come back
    as sent, except integral floats where the schema wants an integer (`integral_numbers`).
    ``misplaced(args)`` may name a better place for refused parameters than the usual
    placement line (a proxy's target parameters sent at its root).
    """
    fp = compiled.short_fingerprint
    if compiled.error is not None:
        count("skipped")
        return None, config_error_result(spec.name, fp, compiled.error)
    assert compiled.validator is not None
    try:
        args = decode_arguments(raw)
    except NotAnObject as exc:
        count("argument_failures")
        return None, invalid_result(spec.name, fp, [json_violation(exc.what)], [], inside=inside)
    violations: list[Violation] = []
    with pattern_budget():
        try:
            if compiled.fast is None or not compiled.fast(args):
                if compiled.validator.is_valid(args):
                    args = integral_numbers(canonical_of(compiled), args)
                else:
                    violations = schema_violations(compiled.validator, args)
        except RecursionError:
            violations = [_too_complex("validating them exceeded the recursion limit")]
        except Exception as exc:  # the validator itself broke: the schema's fault, not the call's
            count("skipped")
            return None, config_error_result(
                spec.name, fp, f"validating against it failed: {exc!r:.200}"
            )
    if not violations:
        try:
            violations = plugin_violations(args)
        except RecursionError:
            violations = [_too_complex("a validator of the tool exceeded the recursion limit")]
        if not violations:
            return args, None
    hint_lines: list[str] = []
    placement = None
    with pattern_budget():
        try:
            hint_lines = hints(
                spec.schema,
                compiled.validator,
                args,
                violations,
                lambda inner: not plugin_violations(inner),
            )
        except RecursionError:
            pass
        if misplaced is not None:
            try:
                placement = misplaced(args)
            except Exception:  # advice only: a broken advisor must not sink the result
                log.exception("misplaced() of tool %s raised", spec.name)
    count("argument_failures")
    return None, invalid_result(
        spec.name, fp, violations, hint_lines, inside=inside, placement=placement
    )


def canonical_of(compiled: Compiled) -> Any:
    """The canonical schema a compiled validator holds."""
    return getattr(compiled.validator, "schema", None)
