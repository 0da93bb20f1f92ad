"""Figure 6, argument fuzzing: every registered tool (all built-in entry points) gets
hypothesis-jsonschema instances of its schema, and mutations of them that break it.

- A valid instance must not crash the host: the call returns one result, of a known
  error kind or a success; an uncaught exception, an error logged by the core, or the
  core's catch-all ``<tool> failed: ...`` text is a finding. A tool may still fail
  legitimately (a missing file, an unknown job id...).
- A mutated instance (extra property, missing required property, wrong type, out-of-range
  value, wrong enum, a non-object) is checked invalid with the schema's own validator
  first, and must then come back ``invalid_arguments`` with ``executed: false`` and never
  reach the execution probe.

The execution probe is a ``callgate_pre_tool_use`` hook: it records every call that got
past validation (the step right after it). It refuses, so they never run, every call of
a tool with outside effects (``web_fetch``, ``task``, ``parallel_tasks``; ``pwsh`` where
registered), any call while an invalid instance is being tried, and mutations whose path
arguments its own lexical check places outside the workspace (confinement has its own
figure). ``bash`` does run, through a command wrapper that launches ``true`` with the
generated command as an inert argument. Everything else runs for real on a temp
workspace.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from callgate import hookimpl
from callgate.hookspecs import Refuse
from callgate.process import Confined
from callgate.results import ERROR_KINDS
from callgate_tasks import SubagentOutcome
from callgate_workflow import Message
from hypothesis import given
from hypothesis import strategies as st

from ._hypo import fixed, install_many_more

install_many_more()
from hypothesis_jsonschema import from_schema  # noqa: E402  (needs the shim first)

BUILT_IN = ["files", "shell", "search", "code", "web", "media", "goals", "workflow",
            "capability", "tasks"]
OUTSIDE_EFFECTS = {"pwsh", "web_fetch", "task", "parallel_tasks"}
TRUE = shutil.which("true") or "/bin/true"
PATH_KEYS = ("path", "source_path", "destination_path")
FILES = {"a.txt": "alpha\nbeta\ngamma\n", "sub/b.py": "def f():\n    return 1\n",
         "nb.ipynb": '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n',
         "m.go": "package m\n\nfunc F() {}\n"}
WRONG_TYPES: tuple[Any, ...] = (None, 7, 2.5, "text", True, [], {}, [1], {"k": "v"})
NON_OBJECTS: tuple[Any, ...] = ([], [1, 2], "not json", '["a"]', "42", 3, True, 1.5, b"\xff")


class Probe:
    """Records what passed validation; refuses what must not run."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = str(workspace)
        self.seen: list[tuple[str, str]] = []
        self.refuse_all = False

    @hookimpl
    def callgate_pre_tool_use(self, call: Any, tool: Any, session: Any) -> Any:
        self.seen.append((call.id, tool.name))
        if self.refuse_all:
            return Refuse("reliability probe: an invalid instance got past validation")
        if tool.name in OUTSIDE_EFFECTS:
            return Refuse("reliability probe: tools with outside effects are not run")
        if not tool.is_read_only(call.arguments) and any(self._outside(call.arguments.get(k))
                                      for k in PATH_KEYS):
            return Refuse("reliability probe: a mutation outside the workspace is not run")
        return None

    def _outside(self, value: Any) -> bool:
        if not isinstance(value, str):
            return False
        if "\x00" in value:
            return True
        full = os.path.realpath(os.path.normpath(os.path.join(self.workspace, value)))
        return not (full == self.workspace or full.startswith(self.workspace + os.sep))


class Neutralizer:
    """Runs ``true`` instead of every shell command, with the command still in its argv:
    bash's whole launch path (argv, environment, process group, job table) is exercised
    on arbitrary command strings without running any of them."""

    def __init__(self) -> None:
        self.launched = 0

    @hookimpl
    def callgate_confine_process(self, launch: Any, session: Any) -> Any:
        self.launched += 1
        return Confined(argv=[TRUE, "--", *launch.argv], env=launch.env, cwd=launch.cwd)


class Integrator:
    """The integrator hooks that make compress and the task tools available."""

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self

    async def run(self, request: Any) -> Any:  # never reached: the probe refuses task calls
        return SubagentOutcome(status="completed", answer="done")

    @hookimpl
    def callgate_session_conversation(self, session: Any) -> Any:
        return self

    def messages(self) -> list[Any]:
        return [Message("m1", "user", "set up the repo", "human", 1),
                Message("m2", "assistant", "done", "synthetic", 1),
                Message("m3", "user", "add a parser", "human", 2)]

    active_turn = 2

    def record_compression(self, record: Any) -> None:
        pass

    @hookimpl
    def callgate_session_summarizer(self, session: Any) -> Any:
        return self

    async def summarize(self, messages: Any, focus: Any) -> str:
        return "summary"


class Errors(logging.Handler):
    """Error records the core or a plugin logged (``log.exception`` on a caught crash)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def mutate(value: Any, schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """One schema-breaking change somewhere in ``value`` (the caller re-validates)."""
    if not isinstance(schema, dict):
        return rng.choice(WRONG_TYPES)
    props = schema.get("properties") or {}
    if isinstance(value, dict) and props and depth < 3 and rng.random() < 0.35:
        inner = [k for k in value if k in props and isinstance(value[k], dict | list)]
        if inner:
            key = rng.choice(inner)
            return {**value, key: mutate(value[key], props[key], rng, depth + 1)}
    if isinstance(value, list) and value and isinstance(schema.get("items"), dict) and \
            rng.random() < 0.6:
        i = rng.randrange(len(value))
        return [*value[:i], mutate(value[i], schema["items"], rng, depth + 1), *value[i + 1:]]
    ops = ["wrong_type", "extra", "drop", "range"]
    op = rng.choice(ops)
    if isinstance(value, dict):
        if op == "extra":
            return {**value, rng.choice(["zz_unknown", "Path", "arguments", "x"]): 1}
        if op == "drop" and schema.get("required"):
            gone = rng.choice(schema["required"])
            return {k: v for k, v in value.items() if k != gone}
        if value:
            key = rng.choice(list(value))
            sub = props.get(key, {})
            return {**value, key: bad_value(value[key], sub, rng, op)}
    return bad_value(value, schema, rng, op)


def bad_value(value: Any, schema: Any, rng: random.Random, op: str) -> Any:
    if op == "range" and isinstance(schema, dict):
        if "enum" in schema:
            return "zz-not-an-option"
        if "maximum" in schema:
            return schema["maximum"] + rng.choice([1, 10**9])
        if "minimum" in schema:
            return schema["minimum"] - rng.choice([1, 10**9])
        if schema.get("maxLength") is not None:
            return "x" * (schema["maxLength"] + 1)
        if schema.get("minLength"):
            return ""
        if schema.get("maxItems") is not None and isinstance(value, list):
            return value + value[:1] * (schema["maxItems"] + 1 - len(value)) if value else \
                [None] * (schema["maxItems"] + 1)
        if schema.get("minItems"):
            return []
        if "pattern" in schema:
            return "\n!! no \t match"
    return rng.choice(WRONG_TYPES)


def with_known_paths(instance: Any, rng: random.Random) -> Any:
    """Point path arguments at real files half the time, so tools get past "not found"."""
    if not isinstance(instance, dict) or rng.random() < 0.5:
        return instance
    out = dict(instance)
    for key in PATH_KEYS:
        if key in out:
            out[key] = rng.choice([*FILES, "sub", ".", "new.txt"])
    return out


class Fuzzer:
    """One session under fuzz: runs calls and keeps the findings and the tallies."""

    def __init__(self, session: Any, probe: Probe) -> None:
        self.s = session
        self.probe = probe
        self.errors = Errors()
        self.findings: list[str] = []
        self.stats = {"valid": 0, "valid_executed": 0, "valid_refused_by_probe": 0,
                      "valid_rejected_by_validators": 0, "invalid": 0, "invalid_executed": 0,
                      "not_a_mutation": 0}
        self.tally: dict[str, int] = {}
        self._ids = iter(range(10**9))

    def run(self, name: str, arguments: Any) -> tuple[Any, bool]:
        """One call; returns its result (None if the host raised) and whether it was probed."""
        call_id = f"f{next(self._ids)}"
        before, seen = len(self.errors.records), len(self.probe.seen)
        try:
            [result] = self.s.run({"id": call_id, "name": name, "arguments": arguments})
        except Exception as exc:  # the host must answer every call with a result
            self.findings.append(f"{name} {shown(arguments)}: raised {type(exc).__name__}: "
                                 f"{exc}")
            return None, True
        passed = any(cid == call_id for cid, _ in self.probe.seen[seen:])
        if len(self.errors.records) > before:
            message = self.errors.records[before].getMessage()
            self.findings.append(f"{name} {shown(arguments)}: logged an error: {message}")
        if result.is_error:
            kind = result.error.kind if result.error else None
            if kind not in ERROR_KINDS:
                self.findings.append(f"{name} {shown(arguments)}: unknown error kind {kind!r}")
            if kind == "tool_error" and result.text.startswith(f"{name} failed: "):
                self.findings.append(f"{name} {shown(arguments)}: internal error: "
                                     f"{result.text[:300]!r}")
        return result, passed

    def fuzz(self, name: str, spec: Any, examples: int) -> None:
        validator = jsonschema.Draft202012Validator(spec.schema)

        @fixed(examples)
        @given(from_schema(spec.schema), st.randoms(use_true_random=False))
        def one(instance: Any, rng: random.Random) -> None:
            candidate = with_known_paths(instance, rng)
            if not validator.is_valid(candidate):
                candidate = instance
            self.valid(name, candidate)
            for _ in range(8):
                bad = rng.choice(NON_OBJECTS) if rng.random() < 0.08 else \
                    mutate(candidate, spec.schema, rng)
                if isinstance(bad, bytes | str) or not validator.is_valid(
                        {} if bad is None else bad):  # the host reads null as no arguments
                    break
                self.stats["not_a_mutation"] += 1
            else:
                return
            if isinstance(bad, str) and _json_object(bad):
                return
            self.invalid(name, bad)

        one()

    def valid(self, name: str, candidate: Any) -> None:
        self.probe.refuse_all = False
        self.stats["valid"] += 1
        self.tally[name] = self.tally.get(name, 0) + 1
        result, passed = self.run(name, candidate)
        if result is not None and result.is_error and result.error.kind == "invalid_arguments":
            self.stats["valid_rejected_by_validators"] += 1
            if passed:
                self.findings.append(f"{name} {shown(candidate)}: rejected yet probed")
        elif passed and result is not None and result.is_error and \
                result.error.kind == "blocked":
            self.stats["valid_refused_by_probe"] += 1
        elif passed:
            self.stats["valid_executed"] += 1

    def invalid(self, name: str, bad: Any) -> None:
        self.probe.refuse_all = True
        self.stats["invalid"] += 1
        self.tally[name] = self.tally.get(name, 0) + 1
        try:
            result, passed = self.run(name, bad)
        finally:
            self.probe.refuse_all = False
        if passed:
            self.stats["invalid_executed"] += 1
            self.findings.append(f"{name} {shown(bad)}: an invalid instance reached execution")
        elif result is not None and (not result.is_error or
                                     result.error.kind != "invalid_arguments" or
                                     result.meta.get("executed") is not False):
            kind = result.error.kind if result.error else "ok"
            self.findings.append(f"{name} {shown(bad)}: invalid instance answered {kind}: "
                                 f"{result.text[:200]!r}")


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def test_every_tool_survives_valid_and_never_runs_invalid_arguments(
        callgate_session: Callable[..., Any], tmp_path: Path,
        cases: Callable[[int, int], int], figure: Callable[..., None]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    probe, neutral = Probe(ws.resolve()), Neutralizer()
    s = callgate_session(plugins=[probe, neutral, Integrator()], entrypoints=BUILT_IN,
                         workspace=ws, files=FILES,
                         config={"files": {"watch": False}, "search": {"timeout_s": 2}})
    specs = s.session.available_tools()
    registered = {spec.name for spec in s.host.host.registry.tools()}
    assert set(specs) == registered, registered - set(specs)
    fuzzer = Fuzzer(s, probe)
    logging.getLogger("callgate").addHandler(fuzzer.errors)
    try:
        for name in sorted(specs):
            fuzzer.fuzz(name, specs[name], max(2, cases(10_000, 300) // (2 * len(specs))))
    finally:
        logging.getLogger("callgate").removeHandler(fuzzer.errors)
    findings, stats = fuzzer.findings, fuzzer.stats
    figure("argument fuzzing", cases=stats["valid"] + stats["invalid"], tools=len(specs),
           per_tool=fuzzer.tally,
           uncaught=sum(("raised" in f) or ("internal error" in f) or ("logged" in f)
                        for f in findings),
           commands_launched_as_true=neutral.launched, failures=len(findings), **stats)
    assert not findings, "\n".join(findings[:25])


def shown(arguments: Any) -> str:
    text = json.dumps(arguments, default=repr, ensure_ascii=True)
    return text if len(text) <= 300 else text[:300] + "…"


@pytest.mark.parametrize("raw", NON_OBJECTS)
def test_non_object_arguments_never_execute(callgate_session: Callable[..., Any],
                                            tmp_path: Path, raw: Any) -> None:
    probe = Probe(tmp_path)
    probe.refuse_all = True
    s = callgate_session(plugins=[probe], entrypoints=["files"], workspace=tmp_path,
                         config={"files": {"watch": False}})
    r = s.call("read_file", raw)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
    assert probe.seen == []
