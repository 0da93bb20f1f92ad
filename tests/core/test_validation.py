"""Unit tests of canonical schemas, violations, hints and the fast validity check."""

from __future__ import annotations

import json

import jsonschema
from callgate._validation.arguments import (
    NotAnObject,
    bounded,
    decode_arguments,
    hints,
    schema_violations,
)
from callgate._validation.fastcheck import compile_fast
from callgate.schema import canonical_bytes, canonical_schema, fingerprint, short_fingerprint
from hypothesis import given, settings
from hypothesis import strategies as st

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 20},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "mode": {"enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "flag": {"type": "boolean"},
        "opt": {"type": ["string", "null"], "pattern": "^x"},
    },
    "required": ["path", "limit"],
    "additionalProperties": False,
}


def test_canonical_schema_is_idempotent_and_sorted() -> None:
    schema = {"type": "object", "required": ["b", "a"],
              "properties": {"b": {"type": "object", "required": ["z", "y"]}, "a": {}}}
    once = canonical_schema(schema)
    assert canonical_schema(once) == once
    assert once["required"] == ["a", "b"]
    assert once["properties"]["b"]["required"] == ["y", "z"]
    assert canonical_bytes(schema) == canonical_bytes(once)
    assert canonical_bytes(schema).startswith(b'{"properties":')
    assert canonical_schema({"type": "object"})["properties"] == {}
    assert short_fingerprint(schema) == fingerprint(schema)[:16]
    assert fingerprint(schema) == fingerprint(once)


def test_violation_order_is_json_type_required_additional_then_schema_order() -> None:
    v = jsonschema.Draft202012Validator(canonical_schema(SCHEMA))
    found = schema_violations(v, {"limit": 0, "extra": 1, "path": "", "mode": "c"})
    assert [(x.keyword, x.path) for x in found] == [
        ("additionalProperties", "/"), ("minimum", "/limit"), ("enum", "/mode"),
        ("minLength", "/path")]
    found = schema_violations(v, {"limit": 0, "extra": 1})
    assert [x.keyword for x in found] == ["required", "additionalProperties", "minimum"]
    root_type = schema_violations(v, [])  # type: ignore[arg-type]
    assert root_type[0].keyword == "type" and root_type[0].path == "/"


def test_required_violations_merge_into_one_line_with_sorted_names() -> None:
    v = jsonschema.Draft202012Validator(canonical_schema(SCHEMA))
    [req] = [x for x in schema_violations(v, {}) if x.keyword == "required"]
    assert req.expected == "required properties: limit, path"


def test_decode_arguments() -> None:
    assert decode_arguments(None) == {}
    assert decode_arguments('{"a": 1}') == {"a": 1}
    assert decode_arguments("null") == {}
    for bad in ("[1]", "5", "x", 3, [1]):
        try:
            decode_arguments(bad)
        except NotAnObject:
            continue
        raise AssertionError(bad)


def test_hints_never_echo_values() -> None:
    v = jsonschema.Draft202012Validator(canonical_schema(SCHEMA))
    args = {"tags": '["secret-value"]', "file_path": "secret2"}
    found = hints(SCHEMA, v, args, schema_violations(v, args))
    text = "\n".join(found)
    assert "secret" not in text and '"path"' in text and "/tags" in text


def test_bounded_cuts_on_a_character_boundary() -> None:
    text = "é" * 5000
    out = bounded(text)
    assert len(out.encode()) <= 4096 and out.endswith("[truncated]")
    out.encode("utf-8")


values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False, width=32)
    | st.text(max_size=25),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["path", "limit", "mode", "tags", "ratio", "flag",
                                       "opt", "x"]), children, max_size=5),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_fast_check_never_accepts_what_jsonschema_refuses(instance) -> None:
    canonical = canonical_schema(SCHEMA)
    fast = compile_fast(canonical)
    assert fast is not None
    if fast(instance):
        assert jsonschema.Draft202012Validator(canonical).is_valid(instance), json.dumps(
            instance)


def test_fast_check_accepts_ordinary_valid_arguments_and_declines_the_unusual() -> None:
    fast = compile_fast(canonical_schema(SCHEMA))
    assert fast({"path": "a", "limit": 3, "mode": "a", "tags": ["x"], "flag": True})
    assert not fast({"path": "a", "limit": 3.0})  # valid for jsonschema; left to it
    assert compile_fast({"type": "object", "anyOf": [{}]}) is None
    assert compile_fast({"type": "object", "properties": {"a": {"$ref": "#"}}}) is None
