"""A tool registered as declared data imports its code on the first call (issue 38).

``callgate.deferred("module:attribute")`` names a tool's code without importing it: boot,
listing and the contract never import the module, the first call does (sync, async and
preview alike), a misspelled module fails boot naming the plugin, and a module that fails
to import fails its calls naming the plugin while every other tool keeps working.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from callgate import Host, ToolSpec, deferred, hookimpl
from callgate.host import BootError

CODE = '''
import asyncio
LOADED = True

def execute(ctx, args):
    return "sync " + args["text"]

async def execute_async(ctx, args):
    await asyncio.sleep(0)
    return "async " + args["text"]
'''
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@pytest.fixture
def code_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` for the tools' modules (each test names its own)."""
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("deferred_case_")]:
        del sys.modules[name]


def _plugin(*specs: ToolSpec) -> Any:
    class Plugin:
        __name__ = "lazy"

        @hookimpl
        def callgate_register_tools(self, registry: Any) -> None:
            for spec in specs:
                registry.add(spec)

    return Plugin()


def _spec(name: str, ref: str, **extra: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} echoes its text.", schema=SCHEMA,
                    execute=deferred(ref), read_only=True, **extra)


def test_boot_and_listing_import_nothing_and_the_first_call_imports_the_code(
        code_dir: Path, callgate_session: Any) -> None:
    (code_dir / "deferred_case_a.py").write_text(CODE)
    plugin = _plugin(_spec("echo", "deferred_case_a:execute"),
                     _spec("echo_async", "deferred_case_a:execute_async"))
    host = Host.boot({}, plugins=[plugin], entrypoints=False, surface="full")
    assert {"echo", "echo_async"} <= set(host.visible_names())
    assert host.registry.get("echo").execute.__module__ == "deferred_case_a"
    assert "deferred_case_a" not in sys.modules
    s = callgate_session([plugin])
    assert "deferred_case_a" not in sys.modules
    assert s.call("echo", {"text": "hi"}).text == "sync hi"
    assert "deferred_case_a" in sys.modules
    assert s.call("echo_async", {"text": "hi"}).text == "async hi"  # awaited, not a coroutine
    assert s.call("echo", {"text": "again"}).text == "sync again"


def test_a_misspelled_module_fails_boot_naming_the_plugin(code_dir: Path) -> None:
    plugin = _plugin(_spec("echo", "deferred_case_missing.nowhere:execute"))
    with pytest.raises(BootError, match=r"plugin lazy: tool echo: execute names "
                                        r"deferred_case_missing\.nowhere:execute"):
        Host.boot({}, plugins=[plugin], entrypoints=False, surface="full")


def test_a_module_that_fails_to_import_fails_its_calls_naming_the_plugin(
        code_dir: Path, callgate_session: Any) -> None:
    (code_dir / "deferred_case_broken.py").write_text("raise RuntimeError('half installed')\n")
    (code_dir / "deferred_case_b.py").write_text(CODE)
    plugin = _plugin(_spec("broken", "deferred_case_broken:execute"),
                     _spec("echo", "deferred_case_b:execute"),
                     _spec("missing_attr", "deferred_case_b:nothing_here"))
    s = callgate_session([plugin])
    for _ in range(2):
        r = s.call("broken", {"text": "x"})
        assert r.is_error and r.error is not None and r.error.kind == "tool_error"
        assert r.text.startswith("broken (plugin lazy) cannot run: deferred_case_broken:execute "
                                 "could not be loaded: RuntimeError: half installed"), r.text
    r = s.call("missing_attr", {"text": "x"})
    assert r.is_error and "AttributeError" in r.text and "(plugin lazy)" in r.text
    assert s.call("echo", {"text": "still"}).text == "sync still"


def test_a_reference_must_name_module_and_attribute() -> None:
    for bad in ("deferred_case_a", "deferred_case_a:", ":execute", "mod:not an identifier"):
        with pytest.raises(ValueError, match=r"package\.module:attribute"):
            deferred(bad)


BOUND = '''
import asyncio

def run(program, ctx, args, *, suffix=""):
    return f"{program} ran {args['text']}{suffix}"

async def run_async(program, ctx, args):
    await asyncio.sleep(0)
    return f"{program} awaited {args['text']}"
'''


def test_bound_arguments_come_first_and_the_module_still_loads_on_the_first_call(
        code_dir: Path, callgate_session: Any) -> None:
    # a factory-built tool (a shell tool for the program found at boot) names its code and
    # binds its data: the code module is still imported by the first call only
    (code_dir / "deferred_case_bound.py").write_text(BOUND)
    plugin = _plugin(
        ToolSpec(name="first", description="first runs.", schema=SCHEMA, read_only=True,
                 execute=deferred("deferred_case_bound:run", "/bin/one", suffix="!")),
        ToolSpec(name="second", description="second runs.", schema=SCHEMA, read_only=True,
                 execute=deferred("deferred_case_bound:run_async", "/bin/two")))
    assert repr(deferred("deferred_case_bound:run", "/bin/one", suffix="!")) == (
        "deferred('deferred_case_bound:run', '/bin/one', suffix='!')")
    s = callgate_session([plugin])
    assert "deferred_case_bound" not in sys.modules
    assert s.call("first", {"text": "a"}).text == "/bin/one ran a!"
    assert s.call("second", {"text": "b"}).text == "/bin/two awaited b"  # awaited
