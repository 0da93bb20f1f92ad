"""Per-tool plans and the dispatch of tools that do not block (issue 38).

A session works out once, per tool, which of its stages a call of that tool really runs
(`_pipeline.plan`): the order stays the session's; a hook stage no plugin implements is
left out, and comes back as soon as a plugin implementing it registers. A tool that does
not block runs on the event loop (no thread hop), and an async tool gets its cancel guard
only once it suspends: a tool that answers without suspending pays nothing for it, one
that suspends is still abandoned after the grace period.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import pytest
from callgate import Host, ToolCall, ToolSpec, hookimpl
from callgate._pipeline import worker
from callgate.hookspecs import Refuse

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "minLength": 1}},
    "required": ["path"],
    "additionalProperties": False,
}
THREADS: list[int] = []


async def answers_at_once(ctx: Any, args: dict[str, Any]) -> str:
    THREADS.append(threading.get_ident())
    return "at once"


async def suspends(ctx: Any, args: dict[str, Any]) -> str:
    await anyio.sleep(0)
    return "after a suspension"


async def own_scopes(ctx: Any, args: dict[str, Any]) -> str:
    """A tool whose own task group and cancel scope span a suspension (they must nest
    inside the guard's scope)."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.sleep, 0)
        with anyio.CancelScope():
            await anyio.sleep(0)
    return "scopes nested"


async def hangs(ctx: Any, args: dict[str, Any]) -> str:
    await anyio.sleep(30)  # never looks at ctx.cancelled
    return "too late"


def plain_inline(ctx: Any, args: dict[str, Any]) -> str:
    THREADS.append(threading.get_ident())
    return "inline"


class Tools:
    __name__ = "plan-tools"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        for name, fn, blocking in (
            ("answers_at_once", answers_at_once, True),
            ("suspends", suspends, True),
            ("hangs", hangs, True),
            ("own_scopes", own_scopes, True),
            ("plain_inline", plain_inline, False),
        ):
            registry.add(
                ToolSpec(
                    name=name,
                    description="A test tool.",
                    schema=SCHEMA,
                    read_only=True,
                    execute=fn,
                    blocking=blocking,
                )
            )


class RefuseAll:
    __name__ = "refuse-all"

    @hookimpl
    def callgate_pre_tool_use(self, call: ToolCall, tool: ToolSpec, session: Any) -> Any:
        return Refuse("refused by a plugin registered after the first call")


def call(name: str, i: int = 0) -> ToolCall:
    return ToolCall(f"c{i}", name, {"path": "a.txt"})


def boot() -> Host:
    return Host.boot({}, plugins=[Tools()], entrypoints=False, surface="full")


def test_an_async_tool_is_subscribed_to_the_cancel_only_once_it_suspends(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No wrapping coroutine and no subscription to the session's cancel for the tool that
    answers at once; the one that suspends gets both; both answer."""
    guarded: list[int] = []
    real = worker.CancelEvent.subscribe

    def counting(self: Any, callback: Any) -> int:
        guarded.append(1)
        return real(self, callback)

    monkeypatch.setattr(worker.CancelEvent, "subscribe", counting)

    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            for i in range(3):
                [r] = await session.run_batch([call("answers_at_once", i)])
                assert r.text == "at once" and not r.is_error
            assert guarded == []
            [r] = await session.run_batch([call("suspends")])
            assert r.text == "after a suspension" and not r.is_error
            assert guarded == [1]

    asyncio.run(main())


def test_an_async_tool_s_own_scopes_nest_inside_the_guard(tmp_path: Any) -> None:
    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            for i in range(2):
                [r] = await session.run_batch([call("own_scopes", i)])
                assert r.text == "scopes nested", r.text

    asyncio.run(main())


def test_a_suspended_async_tool_is_still_abandoned_after_the_grace(tmp_path: Any) -> None:
    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            session.cancel_grace_s = 0.2

            async def cancel_soon() -> None:
                await anyio.sleep(0.2)
                session.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_soon)
                [r] = await session.run_batch([call("hangs")])
            assert r.is_error and r.error is not None and r.error.kind == "cancelled", r.text
            assert r.meta.get("abandoned") is True

    asyncio.run(main())


def test_tools_that_do_not_block_run_on_the_event_loop_thread(tmp_path: Any) -> None:
    """No thread hop: a plain tool declared non-blocking and an async tool run on the
    thread of the loop that runs the batch."""

    async def main() -> int:
        async with boot().open_session(tmp_path) as session:
            THREADS.clear()
            for i in range(2):
                await session.run_batch([call("plain_inline", i)])
                await session.run_batch([call("answers_at_once", i)])
                await session.run_batch([call("plain_inline", i), call("answers_at_once", i)])
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert THREADS and set(THREADS) == {loop_thread}


def test_the_per_call_validation_count_takes_no_lock_and_loses_no_count(
    tmp_path: Any,
) -> None:
    """Every call counts one argument validation: without the counters' lock (a lock per
    call on the loop), and still exact when other threads count at the same time."""

    class CountingLock:
        def __init__(self) -> None:
            self.taken = 0
            self.lock = threading.Lock()

        def __enter__(self) -> None:
            self.taken += 1
            self.lock.acquire()

        def __exit__(self, *exc: object) -> None:
            self.lock.release()

    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            counters = session.state.counters
            before = session.counters()["argument_validations"]
            lock = counters._lock = CountingLock()
            for i in range(20):
                await session.run_batch([call("answers_at_once", i)])
            assert lock.taken == 0
            assert session.counters()["argument_validations"] == before + 20

            def hammer() -> None:
                for _ in range(20_000):
                    counters.validated()
                    counters.count("argument_validations")

            threads = [threading.Thread(target=hammer) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert session.counters()["argument_validations"] == before + 20 + 160_000

    asyncio.run(main())


def test_a_plan_keeps_the_session_order_and_leaves_out_hooks_nobody_implements(
    tmp_path: Any,
) -> None:
    async def main() -> None:
        host = boot()
        async with host.open_session(tmp_path) as session:
            await session.run_batch([call("plain_inline")])
            state = session.state
            planned = [s.__name__ for s in state.plans["plain_inline"]]
            assert planned == [
                "resolve_planned",
                "validate_planned",
                "turn",
                "permission_planned",
                "approval",
                "dispatch_planned",
            ]
            host.pm.register(RefuseAll())  # a plugin implementing pre-tool-use, late
            [r] = await session.run_batch([call("plain_inline", 1)])
            assert r.is_error and "registered after the first call" in r.text, r.text
            planned = [s.__name__ for s in state.plans["plain_inline"]]
            assert planned[:4] == ["resolve_planned", "validate_planned", "turn", "pre_tool_use"]
            full = [s.__name__ for s in state.stages]
            bound = [n.removesuffix("_planned") for n in planned]  # each in the stage's place
            assert [n for n in full if n in bound] == bound

    asyncio.run(main())


def test_names_without_a_plan_take_the_general_path(tmp_path: Any) -> None:
    """An unknown name gets no plan (its call is answered by `resolve`, as before), and
    invalid arguments of a planned tool still get the full validation's answer."""

    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            [r] = await session.run_batch([call("no_such_tool")])
            assert r.error is not None and r.error.kind == "unknown_tool"
            assert "no_such_tool" not in session.state.plans
            [r] = await session.run_batch([ToolCall("x", "plain_inline", {"path": ""})])
            assert r.error is not None and r.error.kind == "invalid_arguments", r.text
            assert r.error.signature.startswith("argument_validation:plain_inline:")
            counts = session.counters()
            assert counts["argument_validations"] == 1 and counts["argument_failures"] == 1

    asyncio.run(main())


def test_the_flat_shape_check_finds_what_the_full_scan_finds() -> None:
    """`shape_problem`'s fast path for flat objects passes only exact scalar types and
    ASCII text: a str subclass, a non-ASCII name or value, and nesting get the full scan."""
    from collections import OrderedDict

    from callgate._validation.arguments import MAX_DEPTH, shape_problem

    class Text(str):
        pass

    assert shape_problem({"a": "x", "b": 1, "c": None, "d": 1.5, "e": True}) is None
    assert shape_problem({"a": "héllo", "ü": "ok"}) is None
    assert shape_problem({"a": Text("\udc80")}) is not None
    assert shape_problem({"a": "\udc80"}) is not None
    assert shape_problem({"\udc80": 1}) is not None
    assert shape_problem({"a": OrderedDict({"b": "\udc80"})}) is not None
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_DEPTH + 1):
        node["a"] = {}
        node = node["a"]
    assert shape_problem(deep) is not None


def test_the_one_call_leaf_checks_never_accept_what_jsonschema_refuses() -> None:
    """The certainly-valid check builds the usual leaf (one scalar type and its bounds) and
    an object with its shape as one closure each (issue 38): still never ``True`` for
    arguments jsonschema refuses, and ``True`` for the plain valid ones."""
    import jsonschema
    from callgate._validation.fastcheck import compile_fast

    leaves = [
        {"type": "string"},
        {"type": "string", "minLength": 1, "description": "x"},
        {"type": "string", "minLength": 2, "maxLength": 3},
        {"type": "integer", "minimum": 1},
        {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
        {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5},
        {"type": "boolean"},
    ]
    values = ["", "a", "ab", "abcd", 0, 1, 9, 10, -1, 1.5, 2.5, 3.0, 1.0, True, False, None,
              [], {}, float("nan")]
    for leaf in leaves:
        schema = {"type": "object", "properties": {"x": leaf}, "required": ["x"],
                  "additionalProperties": False}
        fast = compile_fast(schema)
        assert fast is not None
        for value in values:
            args = {"x": value}
            valid = jsonschema.Draft202012Validator(schema).is_valid(args)
            if fast(args):
                assert valid, (leaf, value)
            elif valid:  # unsure only of a float where an integer is wanted, and of NaN
                assert isinstance(value, float), (leaf, value)
                assert leaf["type"] == "integer" or value != value, (leaf, value)
        assert not fast([]) and not fast({}) and not fast({"x": "a", "y": 1})


def test_a_planned_proxy_and_alias_run_the_tool_they_resolve_to(tmp_path: Any) -> None:
    """A proxy's plan keeps the general dispatch: its call runs the `Target` its
    ``resolve_target`` names (not the proxy's own code), and an alias runs its primary,
    both declared non-blocking."""
    from callgate import Target

    def target_tool(ctx: Any, args: dict[str, Any]) -> str:
        return f"target ran with {args['path']}"

    target = ToolSpec(name="target_tool", description="The target.", schema=SCHEMA,
                      read_only=True, execute=target_tool, blocking=False)

    def proxy_own(ctx: Any, args: dict[str, Any]) -> str:
        return "the proxy's own code ran"

    def resolve(ctx: Any, args: dict[str, Any]) -> Any:
        return Target(tool=target, arguments={"path": "t.txt"}, label="tool:target_tool")

    class Proxy:
        __name__ = "plan-proxy"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            registry.add(target)
            registry.add(ToolSpec(name="proxy_tool", description="A proxy.", schema=SCHEMA,
                                  read_only=True, execute=proxy_own, blocking=False,
                                  resolve_target=resolve))
            registry.add(ToolSpec(name="alias_tool", description="An alias.", schema=SCHEMA,
                                  visibility="alias", alias_of="target_tool",
                                  alias_args=lambda a: {"path": "alias-" + a["path"]}))

    async def main() -> None:
        host = Host.boot({}, plugins=[Proxy()], entrypoints=False, surface="full")
        async with host.open_session(tmp_path) as session:
            for i in range(2):  # the first call plans, the second runs the plan
                [r] = await session.run_batch([call("proxy_tool", i)])
                assert r.text == "target ran with t.txt", r.text
                [r] = await session.run_batch([call("alias_tool", i)])
                assert r.text == "target ran with alias-a.txt", r.text

    asyncio.run(main())


def test_without_asyncio_the_guard_is_an_anyio_scope_entered_first(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On another event loop than asyncio's the guard is anyio's cancel scope, entered
    before the tool's first step (forced here by hiding asyncio from the worker): a tool's
    own scopes nest inside it, a tool that answers at once answers, one that hangs is
    abandoned after the grace period."""
    import types

    monkeypatch.setattr(worker, "sys", types.SimpleNamespace(modules={}))

    async def main() -> None:
        async with boot().open_session(tmp_path) as session:
            session.cancel_grace_s = 0.2
            [r] = await session.run_batch([call("answers_at_once")])
            assert r.text == "at once", r.text
            [r] = await session.run_batch([call("own_scopes")])
            assert r.text == "scopes nested", r.text

            async def cancel_soon() -> None:
                await anyio.sleep(0.2)
                session.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_soon)
                [r] = await session.run_batch([call("hangs")])
            assert r.error is not None and r.error.kind == "cancelled", r.text
            assert r.meta.get("abandoned") is True

    asyncio.run(main())


def test_a_proxy_target_s_validator_is_found_without_serialising_its_schema_again(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy's `Target` names a tool the registry does not hold (an MCP server's listed
    tool): its compiled validator is found by the spec's identity after the first call,
    not by serialising its schema to canonical bytes on every call; a new spec (a new
    listing) is still validated against its own schema."""
    from callgate import Target
    from callgate._host import host as host_module

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    listed = [ToolSpec(name="far_tool", description="Far.", schema=schema, read_only=True,
                       execute=lambda ctx, args: f"far {args['n']}", blocking=False)]

    def resolve(ctx: Any, args: dict[str, Any]) -> Any:
        return Target(tool=listed[0], arguments={"n": int(args["path"])}, label="far")

    class Proxy:
        __name__ = "memo-proxy"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            registry.add(ToolSpec(name="proxy_tool", description="A proxy.", schema=SCHEMA,
                                  read_only=True, execute=plain_inline, blocking=False,
                                  resolve_target=resolve))

    serialised: list[Any] = []
    real = host_module.canonical_bytes
    monkeypatch.setattr(host_module, "canonical_bytes",
                        lambda value: serialised.append(value) or real(value))

    async def main() -> None:
        host = Host.boot({}, plugins=[Proxy()], entrypoints=False, surface="full")
        async with host.open_session(tmp_path) as session:
            for i in range(5):
                [r] = await session.run_batch([ToolCall(f"c{i}", "proxy_tool", {"path": "7"})])
                assert r.text == "far 7", r.text
            assert len(serialised) == 1, serialised
            listed[0] = ToolSpec(name="far_tool", description="Far.", read_only=True,
                                 schema={**schema, "properties": {"n": {"type": "string"}}},
                                 execute=lambda ctx, args: "ran", blocking=False)
            [r] = await session.run_batch([ToolCall("c9", "proxy_tool", {"path": "7"})])
            assert r.is_error and "n" in r.text, r.text  # 7 is not a string

    asyncio.run(main())
