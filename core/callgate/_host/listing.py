"""A listing boot from the plugin manifest (`_host.manifest`): record what plugins declare
during a full boot, and replay it into a host that lists tools without importing a plugin.

`Recorder` watches a full boot: which plugin is registering (the registry tells it), the
plugins it registers itself, the warnings it adds, and, through an audit hook, the files it
reads, the directories it lists and the programs it starts. `declarations` turns the booted
host into one entry per entry-point plugin. `replay` registers those declarations into a
fresh host: the core claims its own tables and composes the surface as in any boot; each
plugin's tables are claimed (validated against the config in force) and its declarations
are used only when their key (`manifest.variant_key`) and what it read still match. A host
replayed so lists and describes its tools but runs none (``Host.boot(listing=True)``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from .._model.errors import BootError
from .._model.spec import ProxyRoute, ToolSpec
from .._model.values import PermissionSubject
from .._pipeline.hooks import COMPANION
from . import manifest

log = logging.getLogger("callgate")

#: file names read at registration that are code (the fingerprint covers installed code)
_CODE = (".py", ".pyc", ".so", ".pyd", ".pth")


class Stale(Exception):
    """The manifest cannot answer this boot: the plugins are imported instead."""


class Recorder:
    """What each plugin did while it registered, beyond what the registry keeps."""

    def __init__(self) -> None:
        #: the host being booted (its registry sets it)
        self.host: Any = None
        self.order: list[str] = []
        self.current: str | None = None
        self.extra: dict[str, list[str]] = {}
        self.warnings: dict[str, list[str]] = {}
        self.reads: dict[str, dict[str, Any]] = {}
        self._before: set[str] = set()
        self._warned = 0
        self._originals: dict[str, Any] = {}
        #: the variables each plugin read while registering (``*``: it read them all)
        self.variables: dict[str, set[str]] = {}

    def switch(self, old: str | None, new: str | None) -> None:
        """The registry's ``current_plugin`` moved from ``old`` to ``new``."""
        pm = self.host.pm
        if new is not None:
            if new not in self.order:
                self.order.append(new)
            self._before = {n for n, _p in pm.list_name_plugin()}
            self._warned = len(self.host.warnings)
            self.current = new
            _watch(self)
            self._probing(True)
        elif old is not None:
            self._probing(False)
            after = {n for n, _p in pm.list_name_plugin()}
            self.extra.setdefault(old, []).extend(sorted(after - self._before))
            self.warnings.setdefault(old, []).extend(self.host.warnings[self._warned :])
            self.current = None

    def _probing(self, on: bool) -> None:
        """While a plugin registers, see the paths it stats (``os.path.isfile``,
        ``shutil.which``: what it found, or found missing, decides what it declares);
        the audit hook sees no stat."""
        if not on:
            for name, original in self._originals.items():
                setattr(os, name, original)
            self._originals = {}
            return
        if self._originals:
            return
        for name in ("stat", "lstat", "access"):
            original = getattr(os, name)
            self._originals[name] = original
            setattr(os, name, self._seeing(original))
        self._originals["environ"] = os.environ
        os.environ = _SeenEnviron(os.environ, self)  # noqa: B003 (the same variables, seen)

    def _seeing(self, original: Any) -> Any:
        def seen(target: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(target, (str, bytes, os.PathLike)) and not kwargs.get("dir_fd"):
                self._note(os.fspath(target))
            return original(target, *args, **kwargs)

        return seen

    def _note(self, name: str | bytes, listed: bool = False) -> None:
        plugin = self.current
        if plugin is None:
            return
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        if name.endswith(_CODE):
            return
        full = os.path.abspath(name)
        reads = self.reads.setdefault(plugin, {})
        if full not in reads or (listed and not reads[full][0]):
            reads[full] = [listed, None]  # (its stat below goes through the patched os.stat)
            reads[full] = [listed, manifest.path_state(full, listed)]

    def saw(self, event: str, args: tuple[Any, ...]) -> None:
        """An audit event while ``current`` registers: a file read, a directory listed, a
        program started."""
        plugin = self.current
        if plugin is None:
            return
        name: Any = None
        if event == "open":
            name = args[0] if args else None
            mode = args[1] if len(args) > 1 else "r"
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                return
        elif event in ("os.listdir", "os.scandir"):
            name = args[0] if args else "."
            name = "." if name is None else name
        elif event == "subprocess.Popen":
            executable, argv = (*args, None, None)[:2]
            program = executable or (argv[0] if isinstance(argv, Sequence) and argv else None)
            if isinstance(program, bytes):
                program = os.fsdecode(program)
            if isinstance(program, str):
                import shutil  # recording only

                name = program if os.sep in program else (shutil.which(program) or program)
        if isinstance(name, (str, bytes)):
            self._note(name, listed=event != "open" and event != "subprocess.Popen")


_RECORDER: list[Recorder | None] = [None]
_HOOKED: list[bool] = [False]


def _watch(recorder: Recorder) -> None:
    """Point the process's audit hook at ``recorder`` (the hook is added once, and does
    nothing outside a recording plugin's registration)."""
    _RECORDER[0] = recorder
    if not _HOOKED[0]:
        _HOOKED[0] = True

        def hook(event: str, args: tuple[Any, ...]) -> None:
            found = _RECORDER[0]
            if found is not None and found.current is not None:
                found.saw(event, args)

        sys.addaudithook(hook)


def stop() -> None:
    """Recording is over: the audit hook idles and ``os`` is as it was."""
    found = _RECORDER[0]
    if found is not None:
        found._probing(False)
    _RECORDER[0] = None


def _spec_data(spec: ToolSpec, described: dict[str, str] | None) -> dict[str, Any]:
    subject = spec.permission_subject
    return {
        "name": spec.name,
        "description": spec.description,
        "described": described,
        "schema": spec.schema,
        "read_only": spec.read_only is True,
        "destructive": spec.destructive,
        "visibility": spec.visibility,
        "surface_order": spec.surface_order,
        "alias_of": spec.alias_of,
        "platforms": sorted(spec.platforms),
        "requires_hooks": list(spec.requires_hooks),
        "subject": [subject.kind, list(subject.arguments), subject.dialect] if subject else None,
        "groups": list(spec.groups),
        "route": [spec.route.hidden_tool, spec.route.arguments] if spec.route else None,
        "title": spec.title,
        "idempotent": spec.idempotent,
        "open_world": spec.open_world,
        "runs_at": spec.runs_at,
        "known_as": list(spec.known_as),
        "output_schema": spec.output_schema,
        "examples": list(spec.examples),
    }


class _SeenEnviron(type(os.environ)):  # os._Environ, over the same variables
    """``os.environ`` while a plugin registers: the names it reads are noted (a variable
    a plugin's declarations depend on, ``CODEX_HOME``, is part of their key)."""

    def __init__(self, original: Any, recorder: Recorder) -> None:
        super().__init__(
            original._data,
            original.encodekey,
            original.decodekey,
            original.encodevalue,
            original.decodevalue,
        )
        self._recorder = recorder

    def _seen(self, name: Any) -> None:
        plugin = self._recorder.current
        if plugin is not None and isinstance(name, str):
            self._recorder.variables.setdefault(plugin, set()).add(name)

    def __getitem__(self, key: Any) -> Any:
        self._seen(key)
        return super().__getitem__(key)

    def __iter__(self) -> Any:
        self._seen("*")
        return super().__iter__()


#: what a shell changes on its own between commands (where it is, what it ran last): left
#: out of "every variable", which a plugin reads to hand a program its environment
_SHELL_BOOKKEEPING = frozenset({"PWD", "OLDPWD", "_", "SHLVL"})


def variables_state(names: Any) -> list[Any]:
    """What a plugin read of the environment: each name's value's CRC (``None``: unset; a
    value, a token perhaps, is never written), for ``*`` (it read them all: a program's
    environment built) every one's but the shell's bookkeeping."""
    names = {"*"} if "*" in names else set(names)
    out: list[Any] = []
    for name in sorted(names):
        if name == "*":
            every = [(k, v) for k, v in os.environ.items() if k not in _SHELL_BOOKKEEPING]
            value: str | None = repr(sorted(every))
        else:
            value = os.environ.get(name)
        out.append([name, None if value is None else manifest.checksum(value)])
    return out


def _not_loaded(*_args: Any) -> Any:
    raise BootError(
        "this host was booted to list tools (Host.boot(listing=True)) and runs none; "
        "boot it without listing to call tools"
    )


def _spec(data: dict[str, Any], plugin: str) -> ToolSpec:
    subject = data["subject"]
    route = data["route"]
    described = data["described"]

    def describe(registered: frozenset[str], visible: frozenset[str]) -> str:
        text = described.get(manifest.describe_key(registered, visible))
        if text is None:
            raise Stale("a description for another tool set")
        return text

    return ToolSpec(
        name=data["name"],
        description=data["description"],
        schema=data["schema"],
        execute=_not_loaded,
        read_only=data["read_only"],
        destructive=data["destructive"],
        visibility=data["visibility"],
        surface_order=data["surface_order"],
        alias_of=data["alias_of"],
        platforms=frozenset(data["platforms"]),
        requires_hooks=tuple(data["requires_hooks"]),
        permission_subject=(
            PermissionSubject(kind=subject[0], arguments=tuple(subject[1]), dialect=subject[2])
            if subject
            else None
        ),
        groups=tuple(data["groups"]),
        describe=describe if described is not None else None,
        route=ProxyRoute(hidden_tool=route[0], arguments=route[1]) if route else None,
        title=data["title"],
        idempotent=data["idempotent"],
        open_world=data["open_world"],
        runs_at=data["runs_at"],
        known_as=tuple(data["known_as"]),
        output_schema=data["output_schema"],
        examples=tuple(data["examples"]),
        plugin=plugin,
    )


def _hooks_of(host: Any, names: list[str]) -> list[str]:
    pm = host.pm
    found: set[str] = set()
    for name in names:
        for each in (name, name + COMPANION):
            plugin = pm.get_plugin(each)
            if plugin is None:
                continue
            for caller in pm.get_hookcallers(plugin) or ():
                found.add(caller.name)
    return sorted(found)


def declarations(host: Any, recorder: Recorder) -> dict[str, dict[str, Any]]:
    """``{plugin: {key: its declarations}}`` for every entry-point plugin of a booted host."""
    registry = host.registry
    probe = manifest.probe_key(host.os, host.workspace)
    registered = frozenset(registry.names())
    dkey = manifest.describe_key(registered, host.visible_names(assume_hooks=True))
    out: dict[str, dict[str, Any]] = {}
    for name in recorder.order:
        source = host._plugin_sources.get(name, (None, ""))[1]
        if not source.startswith("entry point"):
            continue
        tables = [
            [table, schema, registry.is_extensible(table)]
            for table, (owner, schema) in registry.config_schemas.items()
            if owner == name
        ]
        values = [(table, registry.table(table)) for table, _s, _e in tables]
        tools = [
            _spec_data(spec, {dkey: spec.description} if spec.describe is not None else None)
            for spec in [*registry.tools(), *registry.other_os_tools()]
            if spec.plugin == name
        ]
        key = manifest.variant_key(probe, values)
        reads = recorder.reads.get(name, {})
        variables = variables_state(recorder.variables.get(name, ()))
        # kept apart by what it read too: two environments that differ only in what a
        # plugin probed (a variable, a file) each keep their declarations
        identity = json.dumps([key, reads, variables], sort_keys=True)
        out[name] = {
            identity: {
                "key": key,
                "index": recorder.order.index(name),
                "tables": tables,
                "extends": registry.extensions_of(name),
                "tools": tools,
                "hooks": _hooks_of(host, [name, *recorder.extra.get(name, [])]),
                "kinds": registry.kinds_of(name),
                "info": list(registry.info(name)),
                "warnings": recorder.warnings.get(name, []),
                "reads": reads,
                "variables": variables,
            }
        }
    return out


def _matches(variant: dict[str, Any]) -> bool:
    names = [name for name, _value in variant.get("variables", [])]
    if variables_state(names) != variant.get("variables", []):
        return False
    return all(
        manifest.path_state(name, listed) == seen
        for name, (listed, seen) in variant["reads"].items()
    )


def replay(host: Any, selected: list[Any], data: dict[str, Any], surface: str | None) -> None:
    """Register the declarations of the ``selected`` entry points into ``host`` (booted up
    to its config) and compose its surface; `Stale` when the manifest cannot answer."""
    from .._registry.registry import Registry

    plugins = data["plugins"]
    probe = manifest.probe_key(host.os, host.workspace)
    registry = host._new_registry()
    chosen: list[tuple[Any, dict[str, Any]]] = []
    for ep in selected:
        variants = plugins.get(ep.name)
        if not isinstance(variants, dict) or not variants:
            raise Stale(f"plugin {ep.name} is not in the manifest")
        chosen.append((ep, variants))
    # the order the plugins registered in when recorded (pluggy's call order)
    chosen.sort(key=lambda pair: min(v.get("index", 0) for v in pair[1].values()))
    implemented: set[str] = set()
    for ep, variants in chosen:
        registry.current_plugin = ep.name
        found = None
        for variant in variants.values():
            values = [
                (table, registry.add_config(table, schema, extensible=extensible))
                for table, schema, extensible in variant["tables"]
            ]
            if manifest.variant_key(probe, values) == variant.get("key") and _matches(variant):
                found = variant
                break
        if found is None:
            raise Stale(f"plugin {ep.name} declared for other inputs")
        for table, properties in found["extends"]:
            registry.extend_config(table, properties)
        for kind in found["kinds"]:
            registry.add_subject_kind_name(kind)
        for line in found["info"]:
            registry.add_info(line)
        for tool in found["tools"]:
            registry.add(_spec(tool, ep.name))
        for note in found["warnings"]:
            log.warning(note)
            host.warnings.append(note)
        implemented.update(found["hooks"])
        registry.current_plugin = None
        dist = ep.dist.name if ep.dist else None
        version = ep.dist.version if ep.dist else None
        host._plugin_sources[ep.name] = (version, f"entry point {ep.value} ({dist})")
    assert isinstance(registry, Registry)
    registry.freeze()
    permissions = registry.table("permissions")
    if any(permissions.get(action) for action in ("allow", "ask", "deny")):
        raise Stale("permission rules are judged with the plugins' own code")
    host._declared_hooks = frozenset(implemented)
    try:
        host._configure(surface)
    except BootError as exc:
        if isinstance(exc.__cause__, Stale):
            raise exc.__cause__ from None
        raise


__all__ = ["Recorder", "Stale", "declarations", "replay", "stop"]
