"""The host: boot (plugin discovery, config, the OS surface) and what every session shares.

Boot follows pluggy's pattern: add the hook specs, load the ``callgate``
entry points (filtered by config and environment), register the integrator's
in-process plugins, ask every plugin to register its tools (and its own hook
specs), then ``check_pending()``. The registry is frozen afterwards; sessions
read from it.
"""

from __future__ import annotations

import importlib.metadata as metadata
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import pluggy

from . import _config, hookspecs
from ._errors import BootError, ConfigError
from ._model import Decision, ToolResult
from ._permissions import CONFIG_SCHEMA as PERMISSIONS_SCHEMA
from ._permissions import RuleEngine
from ._registry import Compiled, Registry, compile_schema
from ._schema import canonical_bytes, canonical_schema, short_fingerprint
from ._session import Session
from ._spec import ToolSpec

log = logging.getLogger("callgate")

PROJECT = "callgate"
ENTRY_POINT_GROUP = "callgate"
LEAN_ORDER = ("bash", "pwsh", "job_output", "job_kill", "edit_file", "read_file", "view_image",
              "write_file", "compress", "use_capability")

#: ``x-workspace``: what a workspace config that is not trusted may do with a key (`_layers`).
CORE_TABLES: dict[str, dict[str, Any]] = {
    "plugins": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "enable": {"type": "array", "items": {"type": "string"}, "default": [],
                       "x-workspace": "user"},
            "block": {"type": "array", "items": {"type": "string"}, "default": [],
                      "x-workspace": "user"},
        },
    },
    "surface": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "mode": {"enum": ["lean", "full"], "default": "lean"},
            "show": {"type": "array", "items": {"type": "string"}, "default": []},
            "hide": {"type": "array", "items": {"type": "string"}, "default": []},
        },
    },
    "results": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "max_chars": {"type": "integer", "minimum": 1000, "default": 30000},
            "store_max_bytes": {"type": "integer", "minimum": 1024, "default": 268435456},
        },
    },
    "workspace": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "extra_roots": {"type": "array", "items": {"type": "string"}, "default": [],
                            "x-workspace": "subset"},
            "extra_read_roots": {"type": "array", "items": {"type": "string"}, "default": [],
                                 "x-workspace": "subset"},
        },
    },
    "permissions": PERMISSIONS_SCHEMA,
    # read only from the user config (`_layers.is_trusted`); claimed so it validates there
    "trust": {
        "type": "object", "additionalProperties": False, "x-workspace": "user",
        "properties": {
            "workspaces": {"type": "array", "items": {"type": "string", "minLength": 1},
                           "default": []},
        },
    },
}


@attrs.frozen
class PluginInfo:
    """What ``callgate plugins`` prints about one plugin."""

    name: str
    version: str | None
    tools: tuple[str, ...]
    source: str
    info: tuple[str, ...] = ()


def _env_list(name: str) -> list[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


class _CorePlugin:
    """The core's own hook implementations; registered like any plugin."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @hookspecs.hookimpl
    def callgate_validate_arguments(self, call: Any, tool: ToolSpec, session: Session) -> Any:
        if tool.validate is None:
            return None
        from ._context import ToolContext

        return list(tool.validate(call.arguments, ToolContext(session, call, tool)))

    @hookspecs.hookimpl
    def callgate_check_permission(self, call: Any, tool: ToolSpec,
                                  session: Session) -> Decision | None:
        return self.host.permissions.decide(call.name, tool, call.arguments, session)


class Host:
    """A booted tool host: registry, plugin manager, config. Open sessions from it."""

    def __init__(self) -> None:  # use Host.boot
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.os = "posix"
        self.registry: Registry
        self.config_source: _config.LayeredSource = _config.LayeredSource(
            [_config.ConfigSource({})])
        self.surface_mode = "lean"
        self.warnings: list[str] = []
        self._tables: dict[str, dict[str, Any]] = {}
        self._compiled: dict[bytes, Compiled] = {}
        self._visible: list[str] = []
        self._plugin_sources: dict[str, tuple[str | None, str]] = {}
        self._impls: dict[str, list[tuple[str, Any, tuple[str, ...]]]] = {}
        self._booted = False
        self.permissions: RuleEngine

    # --- boot ---------------------------------------------------

    @classmethod
    def boot(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        os: str = "auto",
        surface: str | None = None,
        plugins: Sequence[Any] = (),
        entrypoints: bool | Sequence[str] = True,
        workspace: str | os.PathLike[str] | None = None,
        user_config: str | os.PathLike[str] | Mapping[str, Any] | bool = True,
    ) -> Host:
        """Boot a host.

        ``config`` is a file, a mapping, or ``None`` (look for ``callgate.toml`` or
        ``[tool.callgate]`` in ``workspace``: the workspace config, which only tightens
        the user config unless that trusts the workspace). ``user_config`` is ``True``
        (the user's ``config.toml``, see docs/config.md), ``False`` (none) or a file or
        mapping used as the user config. ``os`` forces the surface's OS
        (``"posix"``/``"windows"``). ``plugins`` are in-process plugin objects (or
        ``(name, object)`` pairs). ``entrypoints`` is ``True`` (every installed plugin,
        minus blocked ones), ``False`` (none) or the entry-point names to load.
        """
        host = cls()
        host.os = _pick_os(os)
        host.config_source = _config.load(config, workspace, user_config=user_config)
        plugins_cfg = _config.validate_table(host.config_source, "plugins", CORE_TABLES["plugins"])
        host.pm.register(_CorePlugin(host), name="callgate.core")
        host._plugin_sources["callgate.core"] = (_dist_version("callgate"), "built in")
        if entrypoints:
            host._load_entrypoints(entrypoints, plugins_cfg)
        for item in plugins:
            name, obj = item if isinstance(item, tuple) else (_plugin_name(item), item)
            if host.pm.is_registered(obj) or host.pm.has_plugin(name):
                continue
            host.pm.register(obj, name=name)
            host._plugin_sources[name] = (None, "in process")
        # Tools first: plugins add their own hook specs while registering (workflow's
        # conversation, tasks' runner), so an integrator implementing those is not pending.
        host._register_tools()
        try:
            host.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = host.pm.get_name(exc.plugin) or repr(exc.plugin)
            found = re.search(r"unknown hook '([^']+)'", str(exc))
            hook = found.group(1) if found else str(exc)
            raise BootError(f"plugin {name} implements {hook}, which is not a callgate hook "
                            "(misspelled?)") from None
        host._configure(surface)
        host._booted = True
        return host

    def _load_entrypoints(self, wanted: bool | Sequence[str], cfg: dict[str, Any]) -> None:
        only = _env_list("CALLGATE_LOAD_PLUGINS")
        disabled = set(_env_list("CALLGATE_DISABLE_PLUGINS") or []) | set(cfg["block"])
        enabled = set(cfg["enable"])
        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = ep.dist.name if ep.dist else None
            names = {ep.name, dist} - {None}
            if wanted is not True and not names & set(wanted):  # type: ignore[arg-type]
                continue
            if only is not None and not names & set(only):
                continue
            if enabled and not names & enabled:
                continue
            if names & disabled or self.pm.has_plugin(ep.name):
                continue
            try:
                obj = ep.load()
            except Exception as exc:
                raise BootError(f"plugin {ep.name} ({dist}) failed to load: "
                                f"{type(exc).__name__}: {exc}") from exc
            self.pm.register(obj, name=ep.name)
            version = ep.dist.version if ep.dist else None
            self._plugin_sources[ep.name] = (version, f"entry point {ep.value} ({dist})")

    def _register_tools(self) -> None:
        self.registry = Registry(self.os, self.pm)
        # plugins read their tables while registering: merged by the schemas claimed so far
        self.config_source.schema_for = lambda table: (
            self.registry.config_schemas.get(table, (None, None))[1])
        for name, schema in CORE_TABLES.items():
            self.registry.current_plugin = "callgate.core"
            self.registry.add_config(name, schema)
        for impl in reversed(self.pm.hook.callgate_register_tools.get_hookimpls()):
            self.registry.current_plugin = impl.plugin_name
            kwargs = {"registry": self.registry, "host": self}
            try:
                impl.function(*[kwargs[a] for a in impl.argnames])
            except BootError:
                raise
            except Exception as exc:
                raise BootError(f"plugin {impl.plugin_name} failed while registering its tools: "
                                f"{type(exc).__name__}: {exc}") from exc
        self.registry.current_plugin = None
        self.registry.freeze()

    def _configure(self, surface: str | None) -> None:
        claimed = self.registry.config_schemas
        for table, (_plugin, schema) in claimed.items():
            self._tables[table] = _config.validate_table(self.config_source, table, schema)
        self.warnings.extend(_config.check_unclaimed(self.config_source, set(claimed)))
        for note in self.config_source.notes:
            log.warning(note)
            self.warnings.append(note)
        self.permissions = RuleEngine.from_host(self)
        self.warnings.extend(getattr(self.permissions, "warnings", []))
        surface_cfg = self._tables["surface"]
        mode = surface or surface_cfg["mode"]
        if mode not in ("lean", "full"):
            raise BootError(f'surface must be "lean" or "full", not {mode!r}')
        if mode == "lean" and "use_capability" not in self.registry:
            msg = ("the capability plugin is not loaded, so hidden tools would be unreachable: "
                   "the surface mode is full")
            log.warning(msg)
            self.warnings.append(msg)
            mode = "full"
        self.surface_mode = mode
        show, hide = set(surface_cfg["show"]), set(surface_cfg["hide"])
        if "use_capability" in hide:
            raise self.config_source.error("use_capability cannot be hidden: it is how hidden "
                                           "tools are reached", ("surface", "hide"))
        for name in sorted((show | hide) - set(self.registry.names())):
            msg = f"[surface] names {name!r}, which is not a registered tool"
            log.warning(msg)
            self.warnings.append(msg)
        visible = []
        for spec in self.registry.tools():
            if spec.visibility == "alias":
                continue
            shown = spec.visibility == "surface" or mode == "full"
            if spec.name in show:
                shown = True
            if spec.name in hide:
                shown = False
            if shown:
                visible.append(spec.name)
        lean = [n for n in LEAN_ORDER if n in visible]
        self._visible = lean + sorted(n for n in visible if n not in LEAN_ORDER)
        self.registry.describe(self._visible)

    # --- config ---------------------------------------------------

    def config(self, table: str) -> dict[str, Any]:
        """A config table with defaults applied (``{}`` for a table nobody claimed)."""
        return self._tables.get(table, {})

    def plugin_config(self, plugin: str | None) -> dict[str, Any]:
        """The first table the plugin claimed (``ctx.config``)."""
        for table, (owner, _schema) in self.registry.config_schemas.items():
            if owner == plugin:
                return self._tables.get(table, {})
        return {}

    def plugin_config_value(self, table: str, key: str, default: Any) -> Any:
        return self._tables.get(table, {}).get(key, default)

    # --- the surface ---------------------------------------------------

    def visible_names(self) -> list[str]:
        """The provider-visible tools, in surface order (lean order, then by name)."""
        return list(self._visible)

    def surface(self, provider: str | None = None) -> list[Any]:
        """The visible tools as ``provider`` defines them (``None``: canonical entries)."""
        specs = [s for n in self._visible if (s := self.registry.get(n)) is not None]
        return self.render_tools(specs, provider)

    def render_tools(self, specs: Sequence[ToolSpec], provider: str | None) -> list[Any]:
        from . import _providers

        if provider is None:
            return [self.contract_entry(s) for s in specs]
        return _providers.render_tools(specs, provider)

    def render_result(self, result: ToolResult, provider: str) -> Any:
        """The provider's tool-result shape for ``result``."""
        from . import _providers

        return _providers.render_result(result, provider)

    def accept_arguments(self, provider: str, name: str, arguments: Any) -> Any:
        """A provider's call arguments in the canonical form the pipeline validates.

        Only the strict renderings (``openai-responses``, ``openai-chat-strict``)
        change: the nulls strict mode sends for optional properties the model left
        out are removed.
        """
        from . import _providers

        spec = self.registry.get(name)
        if spec is None:
            return arguments
        return _providers.accept_arguments(spec, provider, arguments)

    def contract_entry(self, spec: ToolSpec) -> dict[str, Any]:
        return {"name": spec.name, "read_only": spec.contract_read_only,
                "description": spec.description, "schema": canonical_schema(spec.schema)}

    def contract_entries(self) -> list[dict[str, Any]]:
        """``{name, read_only, description, schema}`` of the visible surface, by name."""
        return [self.contract_entry(s) for s in sorted(
            (self.registry.get(n) for n in self._visible), key=lambda s: s.name) if s]

    def all_contract_entries(self) -> list[dict[str, Any]]:
        """Every registered tool, hidden tools and aliases included, by name."""
        return [self.contract_entry(s) for s in self.registry.tools()]

    # --- validation cache ---------------------------------------------------

    def compiled(self, spec: ToolSpec) -> Compiled:
        """The compiled validator of a tool's schema, cached by its canonical bytes."""
        if self.registry.get(spec.name) is spec:
            return self.registry.compiled(spec.name)
        key = canonical_bytes(spec.schema) if isinstance(spec.schema, dict) else \
            repr(spec.schema).encode()
        found = self._compiled.get(key)
        if found is None:
            fp = short_fingerprint(spec.schema) if isinstance(spec.schema, dict) else "0" * 16
            found = self._compiled[key] = compile_schema(spec.schema, fp)
        return found

    # --- hooks ---------------------------------------------------

    def each_hook(self, name: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        """Call a hook's implementations one by one, in pluggy's order, yielding
        ``(plugin name, result)`` so that decisions can name their plugin."""
        impls = self._impls.get(name)
        if impls is None:
            caller = getattr(self.pm.hook, name)
            impls = [(i.plugin_name, i.function, i.argnames)
                     for i in reversed(caller.get_hookimpls())]
            if self._booted:
                self._impls[name] = impls
        for plugin_name, function, argnames in impls:
            result = function(*[kwargs[a] for a in argnames])
            if result is not None:
                yield plugin_name, result

    # --- sessions ---------------------------------------------------

    def open_session(self, workspace: str | os.PathLike[str],
                     session_dir: str | os.PathLike[str] | None = None,
                     origin: str | None = None) -> Session:
        """Open a session on ``workspace`` (use ``async with`` or ``await session.close()``)."""
        if not os.path.isdir(workspace):
            raise FileNotFoundError(f"workspace {os.fspath(workspace)} is not a directory")
        return Session(self, workspace, session_dir, origin)

    # --- introspection ---------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every registered plugin: name, version, its tools, where it came from."""
        out = []
        by_plugin: dict[str, list[str]] = {}
        for spec in [*self.registry.tools(), *self.registry.other_os_tools()]:
            by_plugin.setdefault(spec.plugin or "", []).append(spec.name)
        for name, _plugin in self.pm.list_name_plugin():
            version, source = self._plugin_sources.get(name, (None, "in process"))
            out.append(PluginInfo(name, version, tuple(sorted(by_plugin.get(name, []))), source,
                                  self.registry.info(name)))
        return sorted(out, key=lambda p: p.name)


def _pick_os(value: str) -> str:
    if value == "auto":
        return "windows" if sys.platform == "win32" else "posix"
    if value not in ("posix", "windows"):
        raise BootError(f'os must be "auto", "posix" or "windows", not {value!r}')
    return value


def _plugin_name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or getattr(obj, "name", None) or type(obj).__name__


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


__all__ = ["ConfigError", "Host", "PluginInfo"]
