"""The plugin contract, as pluggy promises it (issue 17): every hook through ``pm.hook``,
in the pipeline's order, with the same effective call and tool; wrappers, tryfirst and
hook-call monitoring work; answers name their plugin."""

from __future__ import annotations

from typing import Any

import pytest
from callgate import Host, ToolCall, ToolSpec, hookimpl
from callgate.hookspecs import Refuse

from .hook_recorder import PIPELINE_HOOKS, HookRecorder, Tools, Wrappers

ASK = {"permissions": {"mode": "ask"}}
ORDER = ["validate_arguments", "pre_tool_use", "check_permission", "ask_permission",
         "shape_result"]


def test_hook_order_for_a_direct_call(callgate_session) -> None:
    recorder, tools = HookRecorder(), Tools()
    s = callgate_session([tools, recorder], config=ASK)
    assert s.call("write_note", {"text": "hi"}).text == "write_note ran"
    assert recorder.hooks() == ORDER
    assert {(name, tool, via) for _hook, name, tool, _args, via in recorder.seen} == \
        {("write_note", "write_note", None)}
    assert all(args == {"text": "hi"} for *_, args, _via in recorder.seen)
    assert tools.ran == [("write_note", {"text": "hi"})]
    s.close()
    assert recorder.lifecycle == ["register_tools", "session_start", "session_end"]


def test_every_hook_sees_decoded_arguments(callgate_session) -> None:
    recorder = HookRecorder()
    s = callgate_session([Tools(), recorder], config=ASK)
    assert not s.call("write_note", '{"text": "as OpenAI sends it"}').is_error
    assert all(args == {"text": "as OpenAI sends it"} for *_, args, _via in recorder.seen)


def test_hook_order_for_a_call_through_use_capability(callgate_session) -> None:
    """Every hook sees the target (``peek``) and its arguments; the proxy is ``call.via``.
    Validation is asked twice: for the proxy's own arguments, then for the target's."""
    pytest.importorskip("callgate_capability")
    recorder, tools = HookRecorder(), Tools()
    s = callgate_session([tools, recorder], entrypoints=["capability"], surface="lean",
                         config={"permissions": {"mode": "ask", "ask": ["peek"]}})
    assert "peek" not in s.session.tool_names()
    r = s.call("use_capability", {"action": "call", "capability_id": "tool:peek",
                                  "arguments": {"text": "x"}})
    assert r.text == "peek ran" and r.name == "use_capability"
    envelope, *rest = recorder.seen
    assert envelope[:3] == ("validate_arguments", "use_capability", "use_capability")
    assert [hook for hook, *_ in rest] == ORDER
    assert {(name, tool, via) for _hook, name, tool, _args, via in rest} == \
        {("peek", "peek", "use_capability")}
    assert all(args == {"text": "x"} for *_, args, _via in rest)


def test_hook_order_for_a_refused_call(callgate_session) -> None:
    recorder, tools = HookRecorder(refuse="not today"), Tools()
    s = callgate_session([tools, recorder], config=ASK)
    before = s.snapshot()
    r = s.call("write_note", {"text": "hi"})
    assert r.error.kind == "blocked" and r.error.signature == "hook:recorder"
    assert r.text == "blocked: not today"
    assert recorder.hooks() == ["validate_arguments", "pre_tool_use", "shape_result"]
    assert tools.ran == []
    s.assert_unchanged(before)


def test_hook_order_for_a_replaced_call(callgate_session) -> None:
    """The replacement is validated again; permission, the tool and shaping see it."""
    recorder, tools = HookRecorder(replace={"text": "replaced"}), Tools()
    s = callgate_session([tools, recorder], config=ASK)
    assert s.call("write_note", {"text": "original"}).text == "write_note ran"
    assert recorder.hooks() == ["validate_arguments", "pre_tool_use", "validate_arguments",
                                "check_permission", "ask_permission", "shape_result"]
    args = [a for _hook, _n, _t, a, _v in recorder.seen]
    assert args[:2] == [{"text": "original"}, {"text": "original"}]
    assert args[2:] == [{"text": "replaced"}] * 4
    assert tools.ran == [("write_note", {"text": "replaced"})]


def test_an_invalid_replacement_is_refused_and_never_runs(callgate_session) -> None:
    """The hook's fault, not the model's (issue 36.4): config_error naming the hook."""
    recorder, tools = HookRecorder(replace={"text": 42}), Tools()
    s = callgate_session([tools, recorder], config=ASK)
    r = s.call("write_note", {"text": "original"})
    assert r.error.kind == "config_error" and tools.ran == []
    assert r.error.signature == "hook:recorder"
    assert "check_permission" not in recorder.hooks()


def test_a_wrapper_of_each_pipeline_hook_runs_and_sees_the_outcome(callgate_session) -> None:
    wrappers, recorder = Wrappers(), HookRecorder()
    s = callgate_session([Tools(), recorder, wrappers], config=ASK)
    r = s.call("write_note", {"text": "hi"})
    assert r.text == "write_note ran\n[seen by a wrapper]"  # the wrapper changed the outcome
    assert wrappers.hooks() == ["register_tools", *(h.removeprefix("callgate_")
                                                    for h in PIPELINE_HOOKS)]
    outcomes = dict(wrappers.outcomes)
    assert "write_note" in outcomes["register_tools"]
    assert outcomes["validate_arguments"] == [[]]  # the recorder's: no violations
    assert outcomes["pre_tool_use"] == [] and outcomes["check_permission"] == []
    assert outcomes["ask_permission"].action == "allow"  # the recorder's answer
    assert outcomes["shape_result"] == []


def test_a_wrapper_sees_a_refusal_labelled_with_its_plugin(callgate_session) -> None:
    wrappers = Wrappers()
    s = callgate_session([Tools(), HookRecorder(refuse="no"), wrappers])
    s.call("write_note", {"text": "hi"})
    [refusal] = dict(wrappers.outcomes)["pre_tool_use"]
    assert refusal == Refuse("no", source="recorder")


def test_tryfirst_moves_a_refusal_ahead(callgate_session) -> None:
    class First:
        __name__ = "first"

        @hookimpl(tryfirst=True)
        def callgate_pre_tool_use(self, call: ToolCall) -> Refuse:
            return Refuse("first")

    class Named:
        __name__ = "named"

        @hookimpl
        def callgate_pre_tool_use(self, call: ToolCall) -> Refuse:
            return Refuse("named", source="a policy")

    s = callgate_session([Tools(), First(), Named()])
    r = s.call("write_note", {"text": "hi"})
    assert r.error.signature == "hook:first" and r.text == "blocked: first"
    s2 = callgate_session([Tools(), Named()])
    assert s2.call("write_note", {"text": "hi"}).error.signature == "hook:a policy"


def test_hookcall_monitoring_sees_every_implemented_hook(callgate_session) -> None:
    s = callgate_session([Tools(), HookRecorder()], config=ASK)
    traced: list[str] = []
    undo = s.host.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: traced.append(name), lambda *a: None)
    try:
        s.call("write_note", {"text": "hi"})
    finally:
        undo()
    assert traced == list(PIPELINE_HOOKS)


def test_a_plugin_registered_after_boot_is_called_and_named(callgate_session) -> None:
    s = callgate_session([Tools()])
    assert not s.call("write_note", {"text": "hi"}).is_error

    class Late:
        __name__ = "late"

        @hookimpl
        def callgate_pre_tool_use(self, call: ToolCall) -> Refuse:
            return Refuse("late to the party")

    s.host.pm.register(Late(), name="late")
    assert s.call("write_note", {"text": "hi"}).error.signature == "hook:late"
    s.host.pm.unregister(name="late")
    assert not s.call("write_note", {"text": "hi"}).is_error


def test_a_register_tools_failure_names_the_plugin_even_through_a_wrapper() -> None:
    class Broken:
        __name__ = "broken"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            registry.add(ToolSpec(name="fine", description="d", schema={"type": "object"},
                                  execute=lambda ctx, args: "ok"))
            raise RuntimeError("no data file")

    from callgate.host import BootError

    with pytest.raises(BootError, match=r"plugin broken failed while registering its tools: "
                                        r"RuntimeError: no data file"):
        Host.boot({}, plugins=[Wrappers(), Broken()], entrypoints=False)


def test_tools_record_the_plugin_that_registered_them() -> None:
    host = Host.boot({}, plugins=[Tools(), Wrappers()], entrypoints=False)
    assert host.registry.get("write_note").plugin == "hooktools"
    [info] = [p for p in host.plugins() if p.name == "hooktools"]
    assert info.tools == ("peek", "write_note")


def test_pluggy_calls_every_implementation_as_the_plugin_wrote_it(callgate_session) -> None:
    """The host never rewrites pluggy's objects (issue 31): each implementation's function
    is the plugin's own; the answers that must name their plugin (registration, refusals,
    permission decisions) come from its companion (``<plugin> (answers)``), which calls the
    plugin's function with the same pluggy options."""
    from callgate._pipeline.hooks import ATTRIBUTED, Attributed

    recorder = HookRecorder(refuse="no")
    s = callgate_session([Tools(), recorder, Wrappers()])
    s.call("write_note", {"text": "hi"})
    for name, caller in vars(s.host.pm.hook).items():
        if not name.startswith("callgate_"):
            continue
        for impl in caller.get_hookimpls():
            if isinstance(impl.plugin, Attributed):
                assert name in ATTRIBUTED and not (impl.wrapper or impl.hookwrapper)
                continue
            assert impl.function == getattr(impl.plugin, name), (name, impl.plugin_name)
            assert name not in ATTRIBUTED or impl.wrapper or impl.hookwrapper, name
    names = [n for n, _p in s.host.pm.list_name_plugin()]
    assert "recorder" in names and "recorder (answers)" in names
    assert "recorder (answers)" not in [p.name for p in s.host.host.plugins()]


def test_unregistering_a_plugin_takes_its_answers_too(callgate_session) -> None:
    s = callgate_session([Tools(), HookRecorder(refuse="no")])
    assert s.call("write_note", {"text": "hi"}).error.signature == "hook:recorder"
    s.host.pm.unregister(name="recorder")
    assert not s.host.pm.has_plugin("recorder (answers)")
    assert not s.call("write_note", {"text": "hi"}).is_error
