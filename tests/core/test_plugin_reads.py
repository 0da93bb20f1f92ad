"""A plugin's own reads are not the model's (issue 17): ``ctx.files.read_text`` records an
observation only when the plugin asks for one, so a later ``edit_file`` still needs the
model to have read the file. And the testing fixture takes tool arguments in one dict."""

from __future__ import annotations

from typing import Any

import callgate_files
import pytest
from callgate import Registry, ToolSpec, hookimpl

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}},
          "required": ["path"], "additionalProperties": False}


class Reader:
    """``sniff`` reads a file for itself; ``show`` shows it to the model (``observe=True``)."""

    __name__ = "reader"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.add(ToolSpec(name="sniff", description="Count a file's lines.", read_only=True,
                              schema=SCHEMA, execute=lambda ctx, args: str(
                                  len(ctx.files.read_text(args["path"]).splitlines()))))
        registry.add(ToolSpec(name="show", description="Show a file.", read_only=True,
                              schema=SCHEMA, execute=lambda ctx, args: ctx.files.read_text(
                                  args["path"], observe=True)))


EDIT = {"path": "a.txt", "old_string": "one", "new_string": "uno"}


def test_a_plugin_read_is_not_an_observation(callgate_session) -> None:
    s = callgate_session([Reader(), callgate_files], files={"a.txt": "one\ntwo\n"})
    assert s.expect_ok("sniff", {"path": "a.txt"}) == "2"
    assert s.session.observations() == {}
    before = s.snapshot()
    s.expect_error("edit_file", EDIT, kind="not_observed", signature="FS_NOT_OBSERVED")
    s.assert_unchanged(before)


def test_a_read_the_plugin_shows_the_model_observes_when_asked(callgate_session) -> None:
    s = callgate_session([Reader(), callgate_files], files={"a.txt": "one\ntwo\n"})
    assert s.expect_ok("show", {"path": "a.txt"}) == "one\ntwo\n"
    assert list(s.session.observations()) == [str(s.path("a.txt").resolve())]
    s.expect_ok("edit_file", EDIT)
    assert s.read("a.txt") == b"uno\ntwo\n"


def test_a_missing_file_read_by_a_plugin_records_nothing(callgate_session) -> None:
    s = callgate_session([Reader()])
    s.expect_error("sniff", {"path": "nope.txt"}, kind="not_found")
    assert s.session.observations() == {}


# --- the fixture ------------------------------------------------------------------------------


class Echo:
    """``echo`` has arguments named like the fixture's own keywords."""

    __name__ = "echo"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        schema = {"type": "object", "additionalProperties": {"type": "string"}}
        registry.add(ToolSpec(name="echo", description="Echo the arguments.", read_only=True,
                              schema=schema, execute=lambda ctx, args: ",".join(
                                  f"{k}={v}" for k, v in sorted(args.items()))))


def test_tool_arguments_named_like_fixture_keywords_reach_the_tool(callgate_session) -> None:
    s = callgate_session([Echo()])
    args: dict[str, Any] = {"arguments": "a", "text": "t", "kind": "k", "contains": "c"}
    assert s.call("echo", args).text == "arguments=a,contains=c,kind=k,text=t"
    assert s.call("echo", **args).text == "arguments=a,contains=c,kind=k,text=t"
    assert s.expect_ok("echo", {"text": "x"}, text="text=x") == "text=x"
    r = s.expect_error("echo", {"kind": 1}, kind="invalid_arguments")
    assert "echo" in r.text


def test_both_forms_of_arguments_at_once_raise(callgate_session) -> None:
    s = callgate_session([Echo()])
    with pytest.raises(TypeError, match="not both"):
        s.call("echo", {"a": "1"}, b="2")
    with pytest.raises(TypeError):
        s.expect_ok("echo", path="x")  # the assertion's keywords are never the tool's
