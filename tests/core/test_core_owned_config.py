"""The core owns and declares every config key it enforces (issue 31).

``[files] read_denylist``, ``protected``, ``allow_protected``, ``encodings``,
``max_edit_bytes`` and ``stale_detail`` are the core's: its gate and file API enforce them
for every file tool, so a host whose only file tool is a third party's still hides what
the deny list hides and refuses writes to protected paths (before, the files plugin
declared the table: without it the keys were "not read by any loaded plugin; ignored"
while the gate still guarded every writer). A file-tool family adds keys of its own to
the table (``Registry.extend_config``); a key nobody loaded declares is a warning.

And statically: every table the core's code reads is one the core declares.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import callgate_files
import pytest
from callgate import Host, PathRole, Registry, ToolContext, ToolSpec, hookimpl
from callgate.host import BootError
from callgate.testing import assert_error, assert_ok

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "callgate"

PATH = {"type": "object", "properties": {"path": {"type": "string"}},
        "required": ["path"], "additionalProperties": False}
WRITE = {"type": "object", "properties": {"path": {"type": "string"},
                                          "text": {"type": "string"}},
         "required": ["path", "text"], "additionalProperties": False}


def read_note(ctx: ToolContext, args: dict[str, Any]) -> str:
    return ctx.files.read_text(args["path"], observe=True)


def write_note(ctx: ToolContext, args: dict[str, Any]) -> str:
    ctx.files.write_text(args["path"], args["text"])
    return "written"


def patch_note(ctx: ToolContext, args: dict[str, Any]) -> str:
    source = ctx.files.load(ctx.gated["path"], tool="patch_note")
    ctx.files.publish(source, source.encode(source.text + args["text"]))
    return "patched"


class NoteTools:
    """A third party's file tools: a reader, a plain writer and a gated mutation (the only
    file tools of the host: no callgate-files)."""

    __name__ = "notes"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.add(ToolSpec(name="read_note", description="Read a note.", schema=PATH,
                              read_only=True, execute=read_note))
        registry.add(ToolSpec(name="write_note", description="Write a note.", schema=WRITE,
                              execute=write_note))
        registry.add(ToolSpec(name="patch_note", description="Append to a note.",
                              schema=WRITE, execute=patch_note,
                              mutates_paths=(PathRole("path"),)))


FILES = {"read_denylist": True, "protected": ["vault/**"]}


def test_only_a_third_party_file_tool_still_gets_the_deny_list_and_protected_paths(
        callgate_session: Any) -> None:
    s = callgate_session([NoteTools()], config={"files": FILES},
                         files={".env": "TOKEN=1\n", "vault/keys.txt": "k\n", "a.txt": "a\n"})
    assert not [w for w in s.host.warnings if "[files]" in w], s.host.warnings
    # the read deny list: a denied file reads exactly as a missing one
    assert_error(s.call("read_note", {"path": ".env"}), "not_found", "FS_NOT_FOUND")
    assert_ok(s.call("read_note", {"path": "a.txt"}), "a\n")
    # protected paths: the file API and the host gate both refuse, and nothing changes
    before = s.snapshot()
    assert_error(s.call("write_note", {"path": "vault/keys.txt", "text": "x"}), "blocked",
                 "FS_PROTECTED")
    assert_error(s.call("write_note", {"path": "vault/new.txt", "text": "x"}), "blocked",
                 "FS_PROTECTED")
    s.call("read_note", {"path": "vault/keys.txt"})
    assert_error(s.call("patch_note", {"path": "vault/keys.txt", "text": "x"}), "blocked",
                 "FS_PROTECTED")
    s.assert_unchanged(before)
    assert_ok(s.call("write_note", {"path": "b.txt", "text": "b"}), "written")


def test_allow_protected_and_the_edit_limit_hold_without_the_files_plugin(
        callgate_session: Any) -> None:
    s = callgate_session([NoteTools()], config={"files": {
        "protected": ["vault/**"], "allow_protected": ["vault/open.txt"],
        "max_edit_bytes": 8}}, files={"vault/open.txt": "o\n", "big.txt": "0123456789\n"})
    assert_ok(s.call("write_note", {"path": "vault/open.txt", "text": "x"}), "written")
    s.call("read_note", {"path": "big.txt"})
    assert_error(s.call("patch_note", {"path": "big.txt", "text": "x"}), "tool_error",
                 "FS_TOO_LARGE")


def test_a_files_key_no_loaded_plugin_declares_is_a_warning_and_the_rest_still_hold(
        callgate_session: Any) -> None:
    s = callgate_session([NoteTools()], config={"files": {**FILES, "watch": False}},
                         files={".env": "x\n"})
    assert any("[files] watch is not read by any loaded plugin; ignored" in w
               for w in s.host.warnings), s.host.warnings
    assert "watch" not in s.host.config("files")
    assert_error(s.call("read_note", {"path": ".env"}), "not_found", "FS_NOT_FOUND")


def test_the_files_plugin_adds_its_key_and_a_misspelled_key_is_refused() -> None:
    host = Host.boot({"files": {"watch": False, "read_denylist": True}},
                     plugins=[callgate_files], entrypoints=False)
    assert host.config("files")["watch"] is False
    owner, schema = host.registry.config_schemas["files"]
    assert owner == "callgate.core" and {"watch", "read_denylist"} <= set(schema["properties"])
    from callgate.host import ConfigError

    with pytest.raises(ConfigError, match="unknown key"):
        Host.boot({"files": {"wacth": False}}, plugins=[callgate_files], entrypoints=False)


def test_a_plugin_may_extend_only_a_core_table_and_never_redeclare_a_key() -> None:
    class Extends:
        __name__ = "extends"

        def __init__(self, table: str, key: str) -> None:
            self.table, self.key = table, key

        @hookimpl
        def callgate_register_tools(self, registry: Registry) -> None:
            registry.extend_config(self.table, {self.key: {"type": "boolean", "default": True,
                                                           "x-workspace": [False, True]}})

    with pytest.raises(BootError, match=r"\[results\] takes no keys from plugins"):
        Host.boot({}, plugins=[Extends("results", "loud")], entrypoints=False)
    with pytest.raises(BootError, match=r"\[files\] protected is declared already"):
        Host.boot({}, plugins=[Extends("files", "protected")], entrypoints=False)


# --- statically: the core reads only what it declares ------------------------------------------


def config_reads(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, table)`` of every config table ``path`` reads by name: ``config("t")``,
    ``table("t")``, ``plugin_config_value("t", ...)``, ``validate_table(_, "t", ...)``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else \
            node.func.id if isinstance(node.func, ast.Name) else None
        position = {"config": 0, "table": 0, "plugin_config_value": 0, "validate_table": 1}
        index = position.get(name or "")
        if index is None or len(node.args) <= index:
            continue
        argument = node.args[index]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            yield node.lineno, argument.value


def undeclared_reads(root: Path, declared: set[str]) -> list[str]:
    return [f"{path.relative_to(root.parent)}:{line} reads [{table}]"
            for path in sorted(root.rglob("*.py")) for line, table in config_reads(path)
            if table not in declared]


def test_the_check_sees_a_core_module_reading_a_plugins_table(tmp_path: Path) -> None:
    root = tmp_path / "callgate"
    root.mkdir()
    (root / "_gate.py").write_text(textwrap.dedent("""
        def check(session):
            if session.host.plugin_config_value("shell", "path", None):
                return session.host.config("results")
    """))
    assert undeclared_reads(root, {"results"}) == ["callgate/_gate.py:3 reads [shell]"]


def test_every_table_the_core_reads_is_one_it_declares() -> None:
    from callgate._host.host import CORE_TABLES

    assert "files" in CORE_TABLES
    problems = undeclared_reads(CORE, set(CORE_TABLES))
    assert not problems, "the core reads tables it does not declare:\n" + "\n".join(problems)
