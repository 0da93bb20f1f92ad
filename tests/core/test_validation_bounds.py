"""The pieces behind bounded validation, one by one (the front-door tests are in
test_replay_robustness.py, test_storm_replay.py and tests/plugins/capability)."""

from __future__ import annotations

import time
from typing import Any

import callgate_ask
import callgate_files
import callgate_shell
import callgate_tasks
import callgate_web
import callgate_workflow
import pytest
from callgate._pipeline.suggest import did_you_mean, meanings_of
from callgate._results.storm import arguments_fingerprint
from callgate._validation.arguments import (
    MAX_DEPTH,
    NotAnObject,
    decode_arguments,
    feedback_text,
    integral_numbers,
)
from callgate._validation.compiled import compile_schema
from callgate._validation.dialects import dialect_uri, outside_reference, validator_class
from callgate._validation.patterns import PatternTimeout, pattern_budget, search
from callgate_cli.cli import first_sentence
from callgate_shell.tools.job_tools import job_tools
from callgate_shell.tools.pwsh import pwsh_tool


@pytest.mark.parametrize(("declared", "dialect"), [
    (None, "https://json-schema.org/draft/2020-12/schema"),
    ("http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema#"),
    ("https://json-schema.org/draft-07/schema", "http://json-schema.org/draft-07/schema#"),
    ("http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-04/schema#"),
    ("https://json-schema.org/draft/2019-09/schema",
     "https://json-schema.org/draft/2019-09/schema"),
    ("https://example.com/my-dialect", "https://json-schema.org/draft/2020-12/schema"),
])
def test_the_declared_dialect_is_recognised_whatever_its_spelling(declared, dialect) -> None:
    schema = {"type": "object"} if declared is None else {"$schema": declared}
    assert dialect_uri(schema) == dialect


def test_references_inside_the_schema_resolve_and_outside_ones_are_found() -> None:
    inside = {"type": "object", "$defs": {"n": {"type": "integer"}},
              "properties": {"a": {"$ref": "#/$defs/n"},
                             "b": {"$id": "https://example.com/b.json", "$defs": {
                                 "s": {"type": "string"}}, "$ref": "#/$defs/s"},
                             "c": {"$ref": "https://example.com/b.json"}}}
    assert outside_reference(inside, validator_class(inside)) is None
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#",
              "definitions": {"n": {"type": "integer"}},
              "properties": {"a": {"$ref": "#/definitions/n"}}}
    assert outside_reference(draft7, validator_class(draft7)) is None
    for ref in ("https://example.com/other.json", "other.json#/x", "#/$defs/missing"):
        schema = {"type": "object", "properties": {"a": {"$ref": ref}},
                  "default": {"$ref": "data, not a reference"}}
        assert outside_reference(schema, validator_class(schema)) == ref
        assert "points outside the schema" in (compile_schema(schema, "0" * 16).error or "")


def test_a_pattern_that_does_not_compile_is_a_config_error() -> None:
    compiled = compile_schema({"type": "object", "properties": {
        "a": {"type": "string", "pattern": "[z-a]"}}}, "0" * 16)
    assert compiled.validator is None and "[z-a]" in (compiled.error or "")


def test_one_budget_is_shared_by_every_match_inside_it() -> None:
    start = time.monotonic()
    with pattern_budget(0.1):
        for _ in range(20):
            with pytest.raises(PatternTimeout):
                search("^(a|a)+$", "a" * 40 + "b")
    assert time.monotonic() - start < 1.0  # twenty matches, one budget
    assert search("^a+$", "aaa") and not search("^b", "aaa")


def test_integral_numbers_follow_the_schema_and_leave_the_input_alone() -> None:
    schema = {"type": "object", "$defs": {"count": {"type": "integer"}},
              "properties": {"n": {"type": "integer"}, "x": {"type": "number"},
                             "both": {"type": ["integer", "number"]},
                             "ref": {"$ref": "#/$defs/count"},
                             "list": {"type": "array", "items": {"type": "integer"}},
                             "pair": {"type": "array", "prefixItems": [{"type": "integer"},
                                                                       {"type": "string"}]},
                             "map": {"type": "object",
                                     "additionalProperties": {"type": "integer"}}}}
    sent = {"n": 2.0, "x": 2.0, "both": 2.0, "ref": 3.0, "list": [1.0, 2.5], "pair": [4.0, "a"],
            "map": {"k": 5.0}, "other": 6.0}
    got = integral_numbers(schema, sent)
    assert got == {"n": 2, "x": 2.0, "both": 2.0, "ref": 3, "list": [1, 2.5], "pair": [4, "a"],
                   "map": {"k": 5}, "other": 6.0}
    assert [type(got[k]) for k in ("n", "x", "ref")] == [int, float, int]
    assert type(got["list"][0]) is int and type(got["other"]) is float
    assert sent["n"] == 2.0 and type(sent["n"]) is float  # never modified in place
    untouched = {"n": 1}
    assert integral_numbers(schema, untouched) is untouched


def test_decoding_refuses_what_cannot_be_checked_and_says_what_it_was() -> None:
    deep: object = "leaf"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    cases = {
        "{path:a}": "Expecting property name enclosed in double quotes at column 2",
        '{"a": 1,\n "b": }': "at line 2 column 7",
        "[" * 100_000: f"nested deeper than {MAX_DEPTH} levels",
        b'{"a": "\xff"}': "not valid UTF-8",
    }
    for raw, said in cases.items():
        with pytest.raises(NotAnObject, match=said):
            decode_arguments(raw)
    for value, said in (({"x": deep}, "nested deeper"),
                        ({"p": "\ud800"}, r"lone surrogate \(not Unicode text\) at /p"),
                        ({"\udcff": 1}, "property name that is not Unicode")):
        with pytest.raises(NotAnObject, match=said):
            decode_arguments(value)
    ok = {"x": [[["fine"]]], "emoji": "\U0001f600 é"}
    assert decode_arguments(ok) is ok


def test_feedback_keeps_head_placement_and_signature_when_cut() -> None:
    body = [f"- /p{i}: type; expected " + "é" * 400 for i in range(20)]
    text = feedback_text("head line", body, "placement line", ["hint: " + "h" * 3000],
                         "signature: sig")
    assert len(text.encode()) <= 4096
    lines = text.split("\n")
    assert lines[0] == "head line" and lines[-1] == "signature: sig"
    assert "placement line" in lines and "[truncated]" in lines
    assert lines.index("[truncated]") < lines.index("placement line")


def test_argument_fingerprints_ignore_form_and_never_crash() -> None:
    assert arguments_fingerprint({"a": 1, "b": [1, 2]}) == \
        arguments_fingerprint('{ "b": [1, 2], "a": 1 }')
    assert arguments_fingerprint(None) == arguments_fingerprint({})
    assert arguments_fingerprint({"a": 1}) != arguments_fingerprint({"a": 2})
    assert arguments_fingerprint("{oops") == arguments_fingerprint("{oops")
    assert arguments_fingerprint({"p": "\ud800"}) is not None
    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    assert arguments_fingerprint({"x": deep}) is None


@pytest.mark.parametrize(("word", "said"), [
    ("nope_tool", ""), ("READ_FILE", "; did you mean read_file?"),
    ("read_fil", "; did you mean read_file?"),
    ("grep_search", '; did you mean use_capability with capability_id "tool:grep"?'),
])
def test_suggestions_come_from_usable_names_only(word: str, said: str) -> None:
    via = 'use_capability with capability_id "tool:{name}"'  # the proxy's ProxyRoute.hidden_tool
    assert did_you_mean(word, ["read_file", "edit_file", "bash", "update_goal"],
                        ["grep", "glob"], via) == said
    if "tool:" in said:  # without a proxy, hidden tools are not suggested
        assert did_you_mean(word, ["read_file"], ["grep", "glob"]) == ""


WINDOWS = ["pwsh", "job_output", "job_kill", "bash_output", "kill_shell", "wait", "edit_file",
           "read_file", "write_file", "use_capability"]


@pytest.mark.parametrize(("word", "direct", "hidden", "said"), [  # issue 36.7
    ("edit", ["read_file", "edit_file"], [], "; did you mean edit_file?"),
    ("str_replace", ["edit_file"], [], "; did you mean edit_file?"),
    ("task", ["ask", "read_file"], ["grep"], ""),  # no task here; ask is a look-alike
    ("task", ["ask", "read_file"], ["task", "grep"],
     '; did you mean use_capability with capability_id "tool:task"?'),  # exact beats close
    ("compress", ["read_file"], ["present", "grep"], ""),
    ("Agent", ["read_file"], ["task"], '; did you mean use_capability with capability_id '
                                        '"tool:task"?'),
    ("WebFetch", ["web_fetch"], [], "; did you mean web_fetch?"),
    ("todowrite", ["todo_write"], [], "; did you mean todo_write?"),
    ("reed_file", ["read_file"], [], "; did you mean read_file?"),
    ("bash", ["bash_output"], [], ""),
])
def test_suggestions_are_close_in_meaning_or_spelling(callgate_session: Any, word: str,
                                                      direct: list[str], hidden: list[str],
                                                      said: str) -> None:
    via = 'use_capability with capability_id "tool:{name}"'
    s = callgate_session(plugins=[callgate_shell, callgate_files, callgate_web,
                                  callgate_workflow, callgate_tasks, callgate_ask])
    meanings = meanings_of(s.session.host.registry.tools())  # the tools' known_as
    assert did_you_mean(word, direct, hidden, via, meanings) == said


def test_on_windows_bash_suggests_pwsh_not_bash_output() -> None:
    """The Windows host registers pwsh, not bash: "bash" means the shell there is."""
    meanings = meanings_of([pwsh_tool("pwsh.exe"), *job_tools()])
    assert did_you_mean("bash", WINDOWS, ["grep"], None, meanings) == "; did you mean pwsh?"
    assert did_you_mean("bash", WINDOWS, ["grep"]) == ""  # bash_output is another tool


@pytest.mark.parametrize(("text", "first"), [
    ('Find files, e.g. "*.go" or "a/b". Prints them.', 'Find files, e.g. "*.go" or "a/b"'),
    ("Do this (i.e. that). Then more.", "Do this (i.e. that)"),
    ("One sentence only.", "One sentence only"),
    ("Run J. Doe's tool. Next.", "Run J. Doe's tool"),
])
def test_first_sentence_does_not_split_on_abbreviations(text: str, first: str) -> None:
    assert first_sentence(text) == first
