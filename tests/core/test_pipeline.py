"""The batch pipeline through the Python API: host.md §3-4 and §10 statements 1-8, 13, 20."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import callgate_providers as providers
import pytest
from callgate import Host, ToolCall, ToolResult, ToolSpec, hookimpl, sync
from callgate.hookspecs import Refuse, Replace
from callgate.host import BootError

from .recording import Recorder


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


def test_two_plugins_registering_one_name_fail_boot_naming_both() -> None:
    """host.md §10.1."""

    class A:
        __name__ = "plugin_a"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            registry.add(ToolSpec(name="read_file", description="a", schema={"type": "object"},
                                  read_only=True, execute=lambda ctx, args: "a"))

    class B(A):
        __name__ = "plugin_b"

    with pytest.raises(BootError) as err:
        Host.boot({}, plugins=[A(), B()], entrypoints=False)
    assert "plugin_a" in str(err.value) and "plugin_b" in str(err.value)
    assert "read_file" in str(err.value)


def test_plugin_raising_during_registration_fails_boot_with_its_name() -> None:
    class Bad:
        __name__ = "bad_plugin"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            raise ValueError("cannot find my data file")

    with pytest.raises(BootError, match=r"bad_plugin.*cannot find my data file"):
        Host.boot({}, plugins=[Bad()], entrypoints=False)


def test_misspelled_hook_is_a_boot_error() -> None:
    class Typo:
        __name__ = "typo_plugin"

        @hookimpl
        def callgate_register_toolz(self, registry: Any) -> None:  # pragma: no cover
            pass

    with pytest.raises(BootError, match="typo_plugin"):
        Host.boot({}, plugins=[Typo()], entrypoints=False)


def test_invalid_tool_name_is_refused_at_boot() -> None:
    class Named:
        __name__ = "named"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            registry.add(ToolSpec(name="has space", description="x", schema={"type": "object"},
                                  execute=lambda ctx, args: "x"))

    with pytest.raises(BootError, match="has space"):
        Host.boot({}, plugins=[Named()], entrypoints=False)


def test_redundant_wrapper_is_not_executed_and_diagnosed(callgate_session, rec) -> None:
    """host.md §10.3."""
    s = callgate_session([rec])
    r = s.call("bash", {"arguments": {"command": "echo X"}})
    assert rec.executed == [] and rec.spawned == []
    assert r.is_error and r.error.kind == "invalid_arguments"
    sig = r.error.signature
    assert sig.startswith("argument_validation:bash:") and sig.endswith(":required")
    assert len(sig.split(":")[2]) == 16
    text = r.text
    required = text.index("- /: required; expected required properties: command")
    assert required < text.index("- /: additionalProperties")
    assert 'one "arguments" object' in text and "remove that wrapper" in text
    assert "echo X" not in text
    assert r.meta["signature"] == sig and sig in text


def test_storm_hint_only_on_third_consecutive_equivalent_batch(callgate_session, rec) -> None:
    """host.md §10.4."""
    s = callgate_session([rec])
    bad = {"name": "bash", "arguments": {"cmd": "ls"}}
    texts = [s.run(bad)[0].text for _ in range(3)]
    assert ["convergence hint" in t for t in texts] == [False, False, True]
    assert s.session.counters()["storm_hints"] == 1
    # a valid call in between resets the streak
    s.run(bad)
    s.run(bad)
    s.run({"name": "items", "arguments": {}})
    assert "convergence hint" not in s.run(bad)[0].text
    assert "convergence hint" not in s.run(bad)[0].text
    assert "convergence hint" in s.run(bad)[0].text


def test_storm_counts_a_batch_once_however_many_calls(callgate_session, rec) -> None:
    s = callgate_session([rec])
    bad = {"name": "bash", "arguments": {}}
    first = s.run(bad, bad, bad)
    assert all("convergence hint" not in r.text for r in first)
    s.run(bad, bad, bad)
    third = s.run(bad, bad, bad)
    assert "convergence hint" in third[0].text
    assert all("convergence hint" not in r.text for r in third[1:])


def test_bad_call_does_not_skip_its_sibling_nor_count_toward_storm(callgate_session,
                                                                    rec) -> None:
    """host.md §10.5."""
    s = callgate_session([rec])
    for _ in range(3):
        bad, good = s.run({"name": "bash", "arguments": {}}, {"name": "items",
                                                              "arguments": {}})
        assert bad.is_error and not good.is_error and good.text == "items ran"
        assert "convergence hint" not in bad.text
    assert s.session.storm.streak == 0


def test_schema_that_does_not_compile_is_a_config_error(callgate_session, rec) -> None:
    """host.md §10.6."""
    s = callgate_session([rec])
    results = [s.call("broken", {"x": 1}) for _ in range(3)]
    r = results[0]
    assert r.error.kind == "config_error" and r.error.signature.endswith(":schema")
    assert "host configuration problem" in r.text
    assert rec.executed == []
    assert "argument generation failed" not in results[2].text
    assert "configuration" in results[2].text.split("convergence hint")[1]
    assert s.session.counters()["skipped"] == 3


def test_arguments_that_are_not_an_object_are_a_json_violation(callgate_session, rec) -> None:
    """host.md §10.7 (first half)."""
    s = callgate_session([rec])
    for raw in ("[1,2]", [1, 2], "not json", 5):
        r = s.call("items", raw)
        assert r.error.kind == "invalid_arguments", raw
        assert r.error.signature.endswith(":json")
    assert rec.executed == []


def test_stringified_json_gets_a_hint_and_is_not_run(callgate_session, rec) -> None:
    """host.md §10.7 (second half)."""
    s = callgate_session([rec])
    r = s.call("items", {"items": '["a"]'})
    assert r.error.kind == "invalid_arguments"
    assert "/items is a string holding JSON; send the array itself" in r.text
    assert '["a"]' not in r.text
    assert rec.executed == []


def test_json_text_arguments_are_decoded_like_openai_sends_them(callgate_session, rec) -> None:
    s = callgate_session([rec])
    r = s.call("items", '{"items": ["a"]}')
    assert not r.is_error and rec.executed == [("items", {"items": ["a"]})]


def test_near_miss_property_names_the_declared_one(callgate_session, rec) -> None:
    s = callgate_session([rec])
    r = s.call("items", {"file_path": "x"})
    assert 'did you mean "path"?' in r.text


def test_no_coercion_ever(callgate_session, rec) -> None:
    s = callgate_session([rec])
    r = s.call("bash", {"command": "ls", "timeout_ms": "500"})
    assert r.error.kind == "invalid_arguments"
    assert "- /timeout_ms: type; expected type integer" in r.text
    assert rec.executed == []


def test_feedback_is_bounded_to_4_kib(callgate_session, rec) -> None:
    s = callgate_session([rec])
    r = s.call("items", {f"unknown_property_{i:03d}_" + "x" * 60: 1 for i in range(200)})
    assert len(r.text.encode()) <= 4096
    assert "and 176 more" in r.text  # long name lists are bounded before the text is cut
    assert "These parameters belong at the root of items's input" in r.text
    assert r.text.endswith(f"signature: {r.error.signature}")


def test_replacement_arguments_are_validated_again(callgate_session, rec) -> None:
    """host.md §10.8."""

    class Rewriter:
        __name__ = "rewriter"

        @hookimpl
        def callgate_pre_tool_use(self, call: ToolCall, tool: ToolSpec, session: Any) -> Any:
            if call.name == "bash" and call.arguments["command"] == "rewrite":
                return Replace({"command": 42})
            if call.name == "bash" and call.arguments["command"] == "refuse":
                return Refuse("commands named refuse are refused")
            if call.name == "bash" and call.arguments["command"] == "fix":
                return Replace({"command": "fixed"})
            return None

    s = callgate_session([rec, Rewriter()])
    failures = s.session.counters().get("argument_failures", 0)
    r = s.call("bash", {"command": "rewrite"})
    assert rec.executed == []
    # issue 36.4: the hook's fault, named, not feedback to the model
    assert r.error.kind == "config_error" and r.error.signature == "hook:rewriter"
    assert r.text.startswith("bash was not run: the host's pre-tool-use hook rewriter "
                             "replaced its arguments with invalid ones")
    assert "fix them and call again" not in r.text and "- /command: type" in r.text
    assert s.session.counters().get("argument_failures", 0) == failures
    r = s.call("bash", {"command": "refuse"})
    assert r.error.kind == "blocked" and r.error.signature == "hook:rewriter"
    assert r.text == "blocked: commands named refuse are refused"
    r = s.call("bash", {"command": "fix"})
    assert not r.is_error and rec.executed == [("bash", {"command": "fixed"})]


def test_unknown_tool_lists_close_matches(callgate_session, rec) -> None:
    s = callgate_session([rec])
    r = s.call("itemz", {})
    assert r.error.kind == "unknown_tool" and r.error.signature == "unknown_tool:itemz"
    assert r.text.startswith('unknown tool "itemz"') and "items" in r.text


def test_hidden_tool_called_directly_is_unavailable(callgate_session, rec) -> None:
    """host.md §3.1 (the lean-mode case with use_capability is the capability plugin's)."""
    s = callgate_session([rec], config={"surface": {"hide": ["sleep"]}})
    assert "sleep" not in s.session.tool_names()
    r = s.call("sleep", {})
    assert r.error.kind == "unavailable" and r.error.signature == "unavailable:sleep"
    assert rec.executed == []


def test_lean_mode_without_the_capability_plugin_is_full_with_one_warning(rec) -> None:
    """host.md §10.17 (second half)."""
    host = Host.boot({}, plugins=[rec], entrypoints=False, surface="lean")
    assert host.surface_mode == "full"
    assert sum("capability plugin is not loaded" in w for w in host.warnings) == 1
    assert "sleep" in host.visible_names()


def test_alias_executes_through_its_primary_but_is_never_on_the_surface(callgate_session,
                                                                         rec) -> None:
    s = callgate_session([rec])
    assert "items_alias" not in s.session.tool_names()
    assert "items_alias" not in [t["name"] for t in providers.surface(s.session, "anthropic")]
    r = s.call("items_alias", {"things": ["a"]})
    assert not r.is_error and rec.executed == [("items", {"items": ["a"]})]
    r = s.call("items_alias", {"items": ["a"]})
    assert r.error.kind == "invalid_arguments"
    entries = [e["name"] for e in providers.contract_entries(s.host.registry.tools())]
    assert "items_alias" in entries


def test_exceptions_become_tool_errors_and_never_escape(callgate_session, rec) -> None:
    s = callgate_session([rec])
    boom, fail, ok = s.run({"name": "boom", "arguments": {}}, {"name": "fail", "arguments": {}},
                           {"name": "items", "arguments": {}})
    assert boom.error.kind == "tool_error" and boom.text == "boom failed: kaboom"
    assert fail.error.kind == "not_found" and fail.error.signature == "THING_NOT_FOUND"
    assert not ok.is_error


def test_results_come_back_in_call_order_with_ids(callgate_session, rec) -> None:
    s = callgate_session([rec])
    calls = [ToolCall(f"c{i}", "sleep", {"seconds": 0.05 * (5 - i)}) for i in range(5)]
    results = s.sync.run_batch(calls)
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert all(r.name == "sleep" for r in results)


@pytest.mark.parametrize("tool", ["sleep", "sync_sleep"])
def test_read_only_calls_in_a_batch_run_concurrently(callgate_session, rec, tool) -> None:
    s = callgate_session([rec])
    start = time.monotonic()
    results = s.run(*[{"name": tool, "arguments": {"seconds": 0.4}} for _ in range(6)])
    elapsed = time.monotonic() - start
    assert all(not r.is_error for r in results)
    assert elapsed < 0.4 * 3, f"6 read-only sleeps of 0.4 s took {elapsed:.2f} s"


def test_mutations_keep_batch_order_and_do_not_overlap(callgate_session, rec) -> None:
    s = callgate_session([rec])
    start = time.monotonic()
    s.run(*[{"name": "write_sleep", "arguments": {"seconds": 0.15}} for _ in range(3)])
    assert time.monotonic() - start >= 0.44


def test_closing_a_session_kills_what_its_tools_started(callgate_session, rec) -> None:
    """host.md §10.13 through the core's session_end path (the shell plugin has its own)."""
    s = callgate_session([rec])
    r = s.call("bash", {"command": "spawn:sleep 60 & sleep 60"})
    assert not r.is_error
    pid = rec.spawned[0]
    os.kill(pid, 0)
    s.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    s.close()  # idempotent


def test_eight_threads_share_one_session_without_overlap(callgate_session, rec) -> None:
    """host.md §10.20."""
    active = 0
    overlap = []
    lock = threading.Lock()

    class Probe:
        __name__ = "probe"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            def run(ctx: Any, args: dict[str, Any]) -> str:
                nonlocal active
                with lock:
                    active += 1
                    if active > 1 and args["exclusive"]:
                        overlap.append(args)
                time.sleep(0.005)
                with lock:
                    active -= 1
                return str(args["n"])

            registry.add(ToolSpec(name="probe", description="p", schema={
                "type": "object", "properties": {"n": {"type": "integer"},
                                                 "exclusive": {"type": "boolean"}}},
                execute=run))

    s = callgate_session([Probe()])
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for b in range(10):
                calls = [ToolCall(f"{t}-{b}-{i}", "probe", {"n": i, "exclusive": True})
                         for i in range(3)]
                results = s.sync.run_batch(calls)
                assert [r.text for r in results] == ["0", "1", "2"]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert errors == [] and overlap == []


def test_counters_count_validations_and_failures(callgate_session, rec) -> None:
    s = callgate_session([rec])
    s.run({"name": "items", "arguments": {}}, {"name": "items", "arguments": {"x": 1}},
          {"name": "nope", "arguments": {}})
    c = s.session.counters()
    assert c["argument_validations"] == 2 and c["argument_failures"] == 1


def test_long_result_is_truncated_with_a_ref_that_pages_back(callgate_session, rec) -> None:
    """host.md §10.11 through the core paging API."""
    s = callgate_session([rec])
    r = s.call("big", {"n": 100_000})
    assert len(r.text) <= s.session.max_chars
    assert r.text.startswith("x" * 100) and r.text.endswith("x" * 100)
    ref = r.meta["result_ref"]
    assert f"result_ref={ref}" in r.text
    assert "re-run the tool with narrower arguments" in r.text
    import json

    offset, chunks = 0, []
    while True:
        page = s.session.results.page(r.call_id, ref, offset, 16384)
        header, _, body = page.partition("\n")
        meta = json.loads(header)
        chunks.append(body)
        if meta["complete"]:
            break
        offset = meta["next_offset"]
    assert "".join(chunks) == "x" * 100_000


def test_notices_are_appended_once_to_the_first_result(callgate_session, rec) -> None:
    s = callgate_session([rec])
    s.session.notices.put("zeta", "[zeta news]")
    s.session.notices.put("alpha", "[alpha news]")
    first, second = s.run({"name": "items", "arguments": {}}, {"name": "items",
                                                               "arguments": {}})
    assert first.text == "items ran\n\n[alpha news]\n\n[zeta news]"
    assert second.text == "items ran"
    assert s.call("items", {}).text == "items ran"


def test_plan_mode_blocks_writers_only(callgate_session, rec) -> None:
    s = callgate_session([rec])
    s.session.set_mode("plan")
    r = s.call("bash", {"command": "touch x"})
    assert r.error.kind == "blocked" and r.error.signature == "mode:plan"
    assert r.text == "blocked: the session is in plan mode; bash is not read-only"
    assert not s.call("items", {}).is_error
    s.session.set_mode("default")
    assert not s.call("bash", {"command": "touch x"}).is_error


def test_deny_from_a_hook_names_the_plugin(callgate_session, rec) -> None:
    from callgate import Decision

    class Guard:
        __name__ = "guard"

        @hookimpl
        def callgate_check_permission(self, call: ToolCall, tool: ToolSpec,
                                      session: Any) -> Decision | None:
            if call.name == "bash":
                return Decision("deny", reason="no shell today")
            return Decision("allow")

    s = callgate_session([rec, Guard()])
    r = s.call("bash", {"command": "ls"})
    assert r.error.signature == "hook:guard" and "no shell today" in r.text
    assert rec.executed == []


def test_shape_result_hooks_can_rewrite_results(callgate_session, rec) -> None:
    class Redact:
        __name__ = "redact"

        @hookimpl
        def callgate_shape_result(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                                  session: Any) -> ToolResult | None:
            if "ran" in result.text:
                return result.with_text(result.text.replace("ran", "[redacted]"))
            return None

    s = callgate_session([rec, Redact()])
    assert s.call("items", {}).text == "items [redacted]"


def test_sync_facade_boot_and_close() -> None:
    with sync.Host.boot({}, plugins=[Recorder()], entrypoints=False, surface="full") as host, \
            host.open_session(os.getcwd()) as session:
        [r] = session.run_batch([ToolCall("1", "items", {})])
        assert r.text == "items ran"


def test_the_enforcement_order_is_one_fixed_tuple_of_stages(callgate_session) -> None:
    """The pipeline's order is data (issue 31): one tuple, run by one loop; plugins hook
    into stages, never add or reorder them. A session without profiles skips the profile
    stage, keeping the order of the rest."""
    from callgate import ChildProfile
    from callgate._pipeline.pipeline import STAGES

    assert isinstance(STAGES, tuple)
    names = ["resolve", "validate", "target", "profile", "turn", "pre_tool_use", "permission",
             "approval", "dispatch", "post_tool_use"]
    assert [stage.__name__ for stage in STAGES] == names
    s = callgate_session([Recorder()])
    assert [st.__name__ for st in s.session.state.stages] == \
        [n for n in names if n != "profile"]
    child = s.child(ChildProfile(name="c"))
    assert child.session.state.stages == STAGES
