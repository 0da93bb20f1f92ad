"""Test-only tools shaped like the real ones for the permission, Plan mode and provider tests.

Each declares the permission subject and groups its real counterpart will
(bash: a command subject in group Bash; write_file, edit_file, move_file: path
subjects in group Edit; grep: a pattern; web_fetch: a URL). They record every
execution, so a test can prove a refused call never ran.
"""

from __future__ import annotations

import os
from typing import Any

from callgate import PathRole, PermissionSubject, ToolSpec, hookimpl
from callgate_commandline import COMMAND

CLOSED = {"additionalProperties": False}


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), **CLOSED}


STRING = {"type": "string", "minLength": 1}


class GateTools:
    """A plugin of stand-in tools; ``executed`` lists ``(tool, arguments)`` in run order."""

    def __init__(self, name: str = "gatetools", *, shell: str = "bash") -> None:
        self.__name__ = name
        self.shell = shell
        self.executed: list[tuple[str, Any]] = []

    def _record(self, name: str, text: str = "ran"):
        def run(ctx: Any, args: dict[str, Any]) -> str:
            self.executed.append((name, args))
            return f"{name} {text}"
        return run

    def _read(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("read_file", args))
        return ctx.files.read_text(args["path"], observe=True)  # it shows the model the file

    def _write(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("write_file", args))
        ctx.files.write_text(args["path"], args["content"])
        return f"wrote {args['path']}"

    def _move(self, ctx: Any, args: dict[str, Any]) -> str:
        self.executed.append(("move_file", args))
        source = ctx.workspace.resolve(args["source_path"], write=True)
        destination = ctx.workspace.resolve(args["destination_path"], write=True)
        os.makedirs(os.path.dirname(destination.path), exist_ok=True)
        os.rename(source.path, destination.path)
        return f"moved {source.display} to {destination.display}"

    def _preview_write(self, ctx: Any, args: dict[str, Any]) -> str:
        return f"+++ {args['path']}\n{args['content']}"

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        add = registry.add
        registry.add_subject_kind(COMMAND)  # as the shell plugin does
        add(ToolSpec(name=self.shell, description="Run a shell command (test stand-in).",
                     schema=_schema({"command": STRING}, ("command",)),
                     execute=self._record(self.shell), visibility="surface",
                     permission_subject=PermissionSubject("command", ("command",)),
                     groups=("Bash",)))
        add(ToolSpec(name=f"{self.shell}_old", description="Old name of the shell.",
                     schema=_schema({"cmd": STRING}, ("cmd",)), visibility="alias",
                     alias_of=self.shell, alias_args=lambda a: {"command": a["cmd"]}))
        add(ToolSpec(name="read_file", description="Read a text file.", read_only=True,
                     schema=_schema({"path": STRING}, ("path",)), execute=self._read,
                     visibility="surface",
                     permission_subject=PermissionSubject("path", ("path",))))
        add(ToolSpec(name="write_file", description="Create or replace a text file.",
                     schema=_schema({"path": STRING, "content": {"type": "string"}},
                                    ("path", "content")),
                     execute=self._write, visibility="surface",
                     mutates_paths=(PathRole("path", "create_or_modify"),),
                     preview=self._preview_write,
                     permission_subject=PermissionSubject("path", ("path",)),
                     groups=("Edit",)))
        add(ToolSpec(name="edit_file", description="Replace text in a file.",
                     schema=_schema({"path": STRING, "old_string": {"type": "string"},
                                     "new_string": {"type": "string"}},
                                    ("path", "old_string", "new_string")),
                     execute=self._record("edit_file"), visibility="surface",
                     permission_subject=PermissionSubject("path", ("path",)),
                     groups=("Edit",)))
        add(ToolSpec(name="move_file", description="Move a file.",
                     schema=_schema({"source_path": STRING, "destination_path": STRING},
                                    ("source_path", "destination_path")),
                     execute=self._move,
                     permission_subject=PermissionSubject(
                         "path", ("source_path", "destination_path")),
                     groups=("Edit",)))
        add(ToolSpec(name="patch_file", description="A third-party mutation in group Edit.",
                     schema=_schema({"path": STRING}, ("path",)),
                     execute=self._record("patch_file"),
                     permission_subject=PermissionSubject("path", ("path",)),
                     groups=("Edit",)))
        add(ToolSpec(name="ls", description="List a directory.", read_only=True,
                     schema=_schema({"path": {"type": "string"}}),
                     execute=self._record("ls"),
                     permission_subject=PermissionSubject("path", ("path",))))
        add(ToolSpec(name="grep", description="Search file contents.", read_only=True,
                     schema=_schema({"pattern": STRING, "path": {"type": "string"}},
                                    ("pattern",)),
                     execute=self._record("grep"),
                     permission_subject=PermissionSubject("pattern", ("pattern",))))
        add(ToolSpec(name="web_fetch", description="Fetch a URL.", read_only=True,
                     schema=_schema({"url": STRING}, ("url",)),
                     execute=self._record("web_fetch"),
                     permission_subject=PermissionSubject("url", ("url",))))
        add(ToolSpec(name="job_kill", description="Stop a background job.",
                     schema=_schema({"job_id": STRING}, ("job_id",)),
                     execute=self._record("job_kill"), visibility="surface"))
        add(ToolSpec(name="inspect_thing", description="Read-only by its arguments.",
                     schema=_schema({"action": {"enum": ["look", "change"]}}, ("action",)),
                     read_only=lambda a: a.get("action") == "look",
                     execute=self._record("inspect_thing")))


class ProxyTools:
    """A ``use_capability``-like proxy: ``{"target": ...}`` resolves to a `Target`.

    ``read`` targets a read-only tool, ``write`` a writer, ``connect`` an MCP
    connect (permission name ``mcp_connect__srv``), ``mcp_write`` an MCP tool
    without ``readOnlyHint`` (``mcp__srv__put``, fallback ask), ``list`` is answered
    by the proxy itself (read-only, like ``use_capability`` list).
    """

    def __init__(self, name: str = "proxytools") -> None:
        self.__name__ = name
        self.executed: list[tuple[str, Any]] = []
        schema = _schema({}, ())
        self.read = ToolSpec(name="target_read", description="r", schema=schema,
                             read_only=True, execute=self._record("target_read"))
        self.write = ToolSpec(name="target_write", description="w", schema=schema,
                              execute=self._record("target_write"))

    def _record(self, name: str):
        def run(ctx: Any, args: dict[str, Any]) -> str:
            self.executed.append((name, args))
            return f"{name} ran"
        return run

    def _resolve(self, ctx: Any, args: dict[str, Any]) -> Any:
        from callgate import Target

        kind = args["target"]
        if kind == "list":
            return None
        if kind == "read":
            return Target(tool=self.read, arguments={}, label="tool:target_read")
        if kind == "write":
            return Target(tool=self.write, arguments={}, label="tool:target_write")
        if kind == "connect":
            return Target(tool=self.write, arguments={}, label="mcp-server:srv",
                          permission_name="mcp_connect__srv", read_only=False)
        return Target(tool=self.write, arguments={}, label="mcp-tool:srv/put",
                      permission_name="mcp__srv__put", read_only=False, destructive=True,
                      fallback="ask")

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add(ToolSpec(
            name="proxy", description="Reach other tools.",
            schema=_schema({"target": {"enum": ["list", "read", "write", "connect",
                                                 "mcp_write"]}}, ("target",)),
            read_only=lambda a: a.get("target") == "list",
            execute=self._record("proxy"), resolve_target=self._resolve,
            visibility="surface"))
