"""Permission subject kinds that plugins supply (issue 31): the core's rule engine knows
``path``, ``pattern`` and ``url``; ``command`` (and any other kind) comes from a plugin at
boot, with its read-only verdict. A bare core carries no shell parser."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from callgate import (
    ChildProfile,
    Host,
    PermissionSubject,
    ToolSpec,
    hookimpl,
)
from callgate.host import BootError, ConfigError
from callgate.permissions import SubjectKind, SubjectPart

SCHEMA = {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"],
          "additionalProperties": False}


def _statements(text: str, dialect: str) -> Sequence[SubjectPart]:
    """A toy kind: SQL statements split at ``;``; ``EXEC`` cannot be judged statically."""
    parts = []
    for statement in (s.strip() for s in text.split(";")):
        if statement:
            undecidable = "it runs a stored procedure" if statement.startswith("EXEC") else None
            parts.append(SubjectPart(statement, undecidable=undecidable))
    return parts


def _prefix(spec: str):
    if ";" in spec:
        raise ValueError("a statement prefix cannot hold ;")
    return lambda value: value.upper().startswith(spec.upper())


def _select_only(text: str, dialect: str) -> str | None:
    statements = [p.label for p in _statements(text, dialect)]
    return None if all(s.upper().startswith("SELECT") for s in statements) else "it changes rows"


STATEMENT = SubjectKind("statement", _statements, _prefix, suggest=lambda label: label,
                        read_only=_select_only)


class SqlTool:
    """A ``query`` tool of kind ``statement``; ``executed`` lists what ran."""

    def __init__(self, kind: SubjectKind | None = STATEMENT, name: str = "sqltool") -> None:
        self.__name__ = name
        self.kind = kind
        self.executed: list[str] = []

    def _run(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(args["sql"])
        return "ok"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        if self.kind is not None:
            registry.add_subject_kind(self.kind)
        registry.add(ToolSpec(name="query", description="Run SQL (test tool).", schema=SCHEMA,
                              execute=self._run, read_only=False,
                              permission_subject=PermissionSubject("statement", ("sql",))))


def test_a_plugin_supplied_kind_is_what_rules_judge(callgate_session) -> None:
    tool = SqlTool()
    s = callgate_session(plugins=[tool], config={"permissions": {
        "mode": "deny", "deny": ["query(DROP)"], "allow": ["query(SELECT)", "query(INSERT)"]}})
    assert not s.call("query", {"sql": "SELECT 1; insert into t values (1)"}).is_error
    dropped = s.call("query", {"sql": "SELECT 1; drop table t"})
    assert dropped.error.signature == "deny:query(DROP)", dropped.text
    assert 'it matches "drop table t"' in dropped.text
    undecided = s.call("query", {"sql": "SELECT 1; EXEC cleanup"})
    assert undecided.error.signature == "deny:query(DROP)"
    assert "cannot be decided statically: it runs a stored procedure" in undecided.text
    assert tool.executed == ["SELECT 1; insert into t values (1)"]


def test_a_supplied_kinds_verdict_decides_in_a_strict_read_only_child(callgate_session) -> None:
    tool = SqlTool()
    child = callgate_session(plugins=[tool]).child(ChildProfile(name="explore", read_only=True))
    assert not child.call("query", {"sql": "SELECT a FROM t"}).is_error
    refused = child.call("query", {"sql": "SELECT 1; DELETE FROM t"})
    assert refused.is_error and "is not read-only: it changes rows" in refused.text
    assert tool.executed == ["SELECT a FROM t"]
    # a kind without a verdict: its tool is kept, and every call of it is refused
    silent = SqlTool(attrs_evolve(STATEMENT, read_only=None))
    child = callgate_session(plugins=[silent]).child(ChildProfile(name="explore", read_only=True))
    refused = child.call("query", {"sql": "SELECT 1"})
    assert "strictly read-only" in refused.text and silent.executed == []


def attrs_evolve(kind: SubjectKind, **changes: Any) -> SubjectKind:
    import attrs

    return attrs.evolve(kind, **changes)


def test_a_tool_whose_kind_no_plugin_supplies_fails_boot() -> None:
    """Without the shell plugin, nothing judges a ``command`` value: the host refuses to
    boot rather than match it as a plain pattern."""
    with pytest.raises(BootError, match="no loaded plugin supplies its permission subject "
                                        "kind 'statement'"):
        Host.boot({}, plugins=[SqlTool(kind=None)], entrypoints=False)


class KindOnly:
    """A plugin that supplies a kind and registers no tool."""

    def __init__(self, kind: SubjectKind, name: str = "kindonly") -> None:
        self.__name__ = name
        self.kind = kind

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add_subject_kind(self.kind)


def test_kinds_are_supplied_once_and_never_under_a_builtin_name() -> None:
    same = Host.boot({}, plugins=[SqlTool(), KindOnly(STATEMENT)], entrypoints=False)
    assert same.registry.subject_kinds() == {"statement": STATEMENT}
    other = attrs_evolve(STATEMENT, suggest=None)
    with pytest.raises(BootError, match="subject kind 'statement' is supplied by plugin "
                                        r"\w+ and differently by plugin \w+"):
        Host.boot({}, plugins=[SqlTool(), KindOnly(other)], entrypoints=False)
    with pytest.raises(BootError, match="subject kind 'path' is built in"):
        Host.boot({}, plugins=[KindOnly(attrs_evolve(STATEMENT, name="path"))],
                  entrypoints=False)


def test_a_malformed_spec_of_a_supplied_kind_fails_boot_with_the_kinds_reason() -> None:
    with pytest.raises(ConfigError, match=r'malformed rule "query\(DROP;\)": a statement '
                                          "prefix cannot hold ;"):
        Host.boot({"permissions": {"deny": ["query(DROP;)"]}}, plugins=[SqlTool()],
                  entrypoints=False)


def test_the_shell_supplies_command_and_its_read_only_verdict() -> None:
    import callgate_commandline
    import callgate_shell

    host = Host.boot({}, plugins=[callgate_shell], entrypoints=False)
    command = host.registry.subject_kinds()["command"]
    assert command is callgate_commandline.COMMAND
    assert command.read_only is not None and command.read_only("ls -la", "posix") is None
    assert command.read_only("rm -rf x", "posix") is not None


# --- the bare core carries no shell parser -------------------------------------------------

SHELL_ONLY = ("tree_sitter", "tree_sitter_bash", "callgate_commandline")


def test_a_host_judging_shell_rules_loads_the_parser_only_with_the_shell() -> None:
    probe = ("import sys\nfrom callgate import Host\n"
             "Host.boot({'permissions': {'deny': ['Bash(git push:*)']}}, entrypoints=False)\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SHELL_ONLY!r}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
