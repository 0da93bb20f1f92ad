"""The host: boot (plugin discovery, config, the OS surface) and what every session shares.

Boot follows pluggy's pattern: add the hook specs, load the ``callgate``
entry points (filtered by config and environment; a name that names no
installed plugin fails boot), register the integrator's in-process plugins,
call ``callgate_register_tools`` through ``pm.hook`` (plugins add tools, claim
config tables, add their own hook specs), then ``check_pending()``. The
registry is frozen afterwards; sessions read from it.
"""

from __future__ import annotations

import logging
import os
import os as _os  # `boot` has a parameter named os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

import attrs
import pluggy

from .. import hookspecs
from .._config import load as _config
from .._files.policy import SCHEMA as FILES_SCHEMA
from .._files.policy import TABLE as FILES_TABLE
from .._files.policy import FilesPolicy
from .._model import entrypoints as metadata
from .._model.canonical import canonical_bytes, short_fingerprint
from .._model.errors import BootError, ConfigError
from .._model.facts import ExecutionFact, FactLog
from .._model.spec import ToolSpec
from .._permissions.rules import CONFIG_SCHEMA as PERMISSIONS_SCHEMA
from .._permissions.rules import RuleEngine
from .._pipeline.hooks import PipelineHooks, PluginManager
from .._registry.registry import Registry
from .._validation.compiled import Compiled, compile_schema

if TYPE_CHECKING:
    from .._pipeline.executor import Executor
    from .._session.session import Session

log = logging.getLogger("callgate")

PROJECT = "callgate"
ENTRY_POINT_GROUP = "callgate"
CORE = "callgate.core"
#: how many unregistered specs (proxy targets) `Host.compiled` holds by identity
_UNREGISTERED_HELD = 512
#: The boot notice of a host where no plugin confines the programs sessions start.
UNCONFINED = (
    "no sandbox plugin is loaded: programs sessions start (shell commands, language "
    "servers, grep's rg, review's git) run unconfined, and those that would run "
    "workspace-controlled code are refused; install callgate-sandbox (and "
    "bubblewrap) to confine them"
)
NO_TOOLS = (
    "no tool plugin is installed, so every call answers unknown tool; install "
    '"callgate[all]" (every built-in tool family) or a tool plugin'
)

#: ``x-workspace``: what a workspace config that is not trusted may do with a key; ``x-kind``:
#: what the key is (`_config.layers`). A key without a policy would be user-only; each says
#: so anyway.
CORE_TABLES: dict[str, dict[str, Any]] = {
    "plugins": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            # which code loads: narrowing "enable" or adding to "block" drops the sandbox
            "enable": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "user",
                "x-kind": "program",
            },
            "block": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "user",
                "x-kind": "program",
            },
        },
    },
    "surface": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            # what the model is shown is the user's choice; a workspace may only trim it
            "mode": {"enum": ["lean", "full"], "default": "lean", "x-workspace": ["full", "lean"]},
            "show": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "user",
            },
            "hide": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "add",
                "x-kind": "denylist",
            },
        },
    },
    "results": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "max_chars": {
                "type": "integer",
                "minimum": 1000,
                "default": 30000,
                "x-workspace": "min",
                "x-kind": "limit",
            },
            "store_max_bytes": {
                "type": "integer",
                "minimum": 1024,
                "default": 268435456,
                "x-workspace": "min",
                "x-kind": "limit",
            },
        },
    },
    "workspace": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "extra_roots": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "subset",
                "x-kind": "path",
            },
            "extra_read_roots": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-workspace": "subset",
                "x-kind": "path",
            },
        },
    },
    "sessions": {
        # the store holds every workspace's history: where it is, what it keeps, how long
        # and who sees it are the user's (a workspace could hide its calls from the record
        # or prune the user's other sessions)
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "store": {"type": "string", "default": "", "x-workspace": "user", "x-kind": "store"},
            "record": {
                "enum": ["all", "calls", "off"],
                "default": "all",
                "x-workspace": "user",
                "x-kind": "store",
            },
            "keep_days": {
                "type": "integer",
                "minimum": 0,
                "default": 90,
                "x-workspace": "user",
                "x-kind": "store",
            },
            "max_store_mb": {
                "type": "integer",
                "minimum": 0,
                "default": 2048,
                "x-workspace": "user",
                "x-kind": "store",
            },
            "allow_global_history": {
                "type": "boolean",
                "default": False,
                "x-workspace": "user",
                "x-kind": "scope",
            },
        },
    },
    "permissions": PERMISSIONS_SCHEMA,
    # enforced by the gate and the file API for every file tool; plugins add keys of their
    # own (`Registry.extend_config`: callgate-files' ``watch``)
    FILES_TABLE: FILES_SCHEMA,
    # where sessions' tools run (docs/executors.md): a transport names a program the host
    # starts, so only the user's config may set it (a workspace could run anything)
    "executor": {
        "type": "object",
        "additionalProperties": False,
        "x-workspace": "user",
        "properties": {
            "transport": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "default": [],
                "x-workspace": "user",
                "x-kind": "program",
            },
            "connect_timeout_s": {
                "type": "number",
                "exclusiveMinimum": 0,
                "default": 60,
                "x-workspace": "user",
                "x-kind": "limit",
            },
            # a worker listening on a websocket (`callgate worker --listen`), instead of a
            # transport; its bearer token from a file or a variable, never from the config
            "url": {
                "type": "string",
                "pattern": "^(wss?://.+)?$",
                "default": "",
                "x-workspace": "user",
                "x-kind": "program",
            },
            "token_file": {
                "type": "string",
                "default": "",
                "x-workspace": "user",
                "x-kind": "path",
            },
            "token_env": {
                "type": "string",
                "default": "",
                "x-workspace": "user",
                "x-kind": "env",
            },
            # how long a worker outlives its host, keeping its sessions' jobs for a resume
            # (0: it ends with its host); how long programs keep running: the user's call
            "detach_grace_s": {
                "type": "number",
                "minimum": 0,
                "maximum": 86400,
                "default": 0,
                "x-workspace": "user",
                "x-kind": "limit",
            },
        },
    },
    # read only from the user config (`_config.layers.is_trusted`); claimed so it validates there
    "trust": {
        "type": "object",
        "additionalProperties": False,
        "x-workspace": "user",
        "properties": {
            "workspaces": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "default": [],
                "x-workspace": "user",
                "x-kind": "scope",
            },
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


def _surface_key(spec: ToolSpec) -> tuple[bool, int, str]:
    """Surface order: tools with a ``surface_order`` first (lowest first), then by name."""
    order = spec.surface_order
    return (order is None, order or 0, spec.name)


class Host:
    """A booted tool host: registry, plugin manager, config. Open sessions from it."""

    def __init__(self) -> None:  # use Host.boot
        self.pm = PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        #: typed calls of the pipeline's hooks (through ``pm.hook``)
        self.hooks = PipelineHooks(self.pm)
        self.os = "posix"
        self.registry: Registry
        self.config_source: _config.LayeredSource = _config.LayeredSource(
            [_config.ConfigSource({})]
        )
        self.surface_mode = "lean"
        #: boot warnings (unclaimed tables, rules naming unknown tools, forced changes)
        self.warnings: list[str] = []
        #: the warnings that say boot did not do what the config asked (a lean surface
        #: forced to full, no tool plugin at all); the CLI always prints them
        self.forced: list[str] = []
        self._compiled: dict[bytes, Compiled] = {}
        #: unregistered specs (a proxy's targets) by identity, the spec held so its id stays
        #: its own: a proxied call is not re-serialised to find its validator
        self._unregistered: dict[int, tuple[ToolSpec, Compiled]] = {}
        self._registered: dict[str, tuple[ToolSpec, Compiled, Callable[[Any], bool] | None]] = {}
        self._visible: list[str] = []
        self._unhooked: dict[str, tuple[str, ...]] = {}
        self._plugin_sources: dict[str, tuple[str | None, str]] = {}
        self.permissions: RuleEngine
        #: the workspace this host booted for (whose config it looked for), if one was given
        self.workspace: str | None = None
        self._facts = FactLog()
        self.files_policy = FilesPolicy()
        #: a listing host's hooks, by name, as the plugin manifest declares them (`listing`)
        self._declared_hooks: frozenset[str] | None = None

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
        listing: bool = False,
    ) -> Self:
        """Boot a host.

        ``config`` is a file, a mapping, or ``None`` (look for ``callgate.toml`` or
        ``[tool.callgate]`` in ``workspace``: the workspace config, which only tightens
        the user config unless that trusts the workspace). ``user_config`` is ``True``
        (the user's ``config.toml``, see docs/config.md), ``False`` (none) or a file or
        mapping used as the user config. ``os`` forces the surface's OS
        (``"posix"``/``"windows"``). ``plugins`` are in-process plugin objects (or
        ``(name, object)`` pairs). ``entrypoints`` is ``True`` (every installed plugin,
        minus blocked ones), ``False`` (none) or the entry-point names to load.

        ``listing`` (with no ``plugins``) boots a host that lists its tools and runs none
        (``callgate tools``): from the plugin manifest in the user's state directory when
        it can answer (no plugin is imported), else by a full boot that records the
        manifest (`_host.manifest`). Its `open_session` fails; plugins' hooks do not run.
        """
        if listing and not plugins:
            return cls._listing(config, os, surface, entrypoints, workspace, user_config)
        return cls._boot(config, os, surface, plugins, entrypoints, workspace, user_config)

    @classmethod
    def _boot(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any] | None,
        os: str,
        surface: str | None,
        plugins: Sequence[Any],
        entrypoints: bool | Sequence[str],
        workspace: str | os.PathLike[str] | None,
        user_config: str | os.PathLike[str] | Mapping[str, Any] | bool,
        recorder: Any = None,
    ) -> Self:
        host, plugins_cfg = cls._configured(config, os, workspace, user_config)
        if entrypoints:
            for ep in host._selected_entrypoints(entrypoints, plugins_cfg):
                host._load_entrypoint(ep)
        for item in plugins:
            name, obj = item if isinstance(item, tuple) else (_plugin_name(item), item)
            if host.pm.is_registered(obj) or host.pm.has_plugin(name):
                continue
            host.pm.register(obj, name=name)
            host._plugin_sources[name] = (None, "in process")
        # Tools first: plugins add their own hook specs while registering (workflow's
        # conversation, tasks' runner), so an integrator implementing those is not pending.
        host._register_tools(recorder)
        try:
            host.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = host.pm.get_name(exc.plugin) or repr(exc.plugin)
            found = re.search(r"unknown hook '([^']+)'", str(exc))
            hook = found.group(1) if found else str(exc)
            raise BootError(
                f"plugin {name} implements {hook}, which is not a callgate hook (misspelled?)"
            ) from None
        host._configure(surface)
        return host

    @classmethod
    def _configured(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any] | None,
        os: str,
        workspace: str | os.PathLike[str] | None,
        user_config: str | os.PathLike[str] | Mapping[str, Any] | bool,
    ) -> tuple[Self, dict[str, Any]]:
        """A new host with its OS, workspace and config read; its ``[plugins]`` table."""
        host = cls()
        host.os = _pick_os(os)
        host.workspace = _os.path.abspath(_os.fspath(workspace)) if workspace is not None else None
        host.config_source = _config.load(config, workspace, user_config=user_config)
        plugins_cfg = _config.validate_table(host.config_source, "plugins", CORE_TABLES["plugins"])
        host._plugin_sources[CORE] = (_dist_version("callgate"), "built in")
        return host, plugins_cfg

    @classmethod
    def _listing(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any] | None,
        os: str,
        surface: str | None,
        entrypoints: bool | Sequence[str],
        workspace: str | os.PathLike[str] | None,
        user_config: str | os.PathLike[str] | Mapping[str, Any] | bool,
    ) -> Self:
        """`boot` with ``listing``: replay the manifest, else boot fully and record it."""
        from . import listing, manifest

        host, plugins_cfg = cls._configured(config, os, workspace, user_config)
        installed = metadata.entry_points(group=ENTRY_POINT_GROUP)
        selected = host._selected_entrypoints(entrypoints, plugins_cfg) if entrypoints else []
        fingerprint = manifest.environment_fingerprint(installed)
        where = manifest.path()
        found = manifest.read(where, fingerprint)
        if found is not None:
            try:
                listing.replay(host, selected, found, surface)
                return host
            except Exception as exc:  # the plugins answer instead (and name what is wrong)
                log.debug("plugin manifest not used: %s", exc)
        recorder = listing.Recorder()
        try:
            booted = cls._boot(
                config, os, surface, (), entrypoints, workspace, user_config, recorder
            )
        finally:
            listing.stop()
        declared = listing.declarations(booted, recorder)
        manifest.write(where, manifest.merge(found, fingerprint, declared))
        return booted

    def _selected_entrypoints(self, wanted: bool | Sequence[str], cfg: dict[str, Any]) -> list[Any]:
        """The installed plugins the arguments, ``[plugins]`` and the environment select. A
        name that matches no installed plugin fails boot (with close matches)."""
        eps = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        installed = sorted(
            {ep.name for ep in eps} | {ep.dist.name for ep in eps if ep.dist},
            key=lambda n: (n not in {ep.name for ep in eps}, n),
        )
        only = _env_list("CALLGATE_LOAD_PLUGINS")
        env_off = _env_list("CALLGATE_DISABLE_PLUGINS") or []
        if wanted is not True:
            self._check_names(list(wanted), installed, "Host.boot(entrypoints=...)")  # type: ignore[arg-type]
        self._check_names(only or [], installed, "CALLGATE_LOAD_PLUGINS")
        self._check_names(env_off, installed, "CALLGATE_DISABLE_PLUGINS")
        self._check_names(cfg["enable"], installed, ("plugins", "enable"))
        self._check_names(cfg["block"], installed, ("plugins", "block"))
        disabled = set(env_off) | set(cfg["block"])
        enabled = set(cfg["enable"])
        selected = []
        for ep in eps:
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
            selected.append(ep)
        return selected

    def _load_entrypoint(self, ep: Any) -> None:
        """Import one selected plugin and register it (a failure names it)."""
        dist = ep.dist.name if ep.dist else None
        try:
            obj = ep.load()
        except Exception as exc:
            raise BootError(
                f"plugin {ep.name} ({dist}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        self.pm.register(obj, name=ep.name)
        version = ep.dist.version if ep.dist else None
        self._plugin_sources[ep.name] = (version, f"entry point {ep.value} ({dist})")

    def _check_names(
        self, names: Sequence[str], installed: list[str], where: str | tuple[str, str]
    ) -> None:
        """Each name must be an installed plugin's entry-point or distribution name."""
        for name in names:
            if name in installed:
                continue
            import difflib  # a misspelled name only

            close = difflib.get_close_matches(name, installed, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            known = ", ".join(n for n in installed if not n.startswith("callgate-")) or "none"
            message = f"is not an installed plugin{hint} (installed plugins: {known})"
            if isinstance(where, tuple):
                source = self.config_source
                error = source.error(f"{name!r} {message}", where)
                file, line = source.locate(where, name)
                raise ConfigError(
                    error.reason, file=file or error.file, key=error.key, line=line or error.line
                )
            raise BootError(f"{where} names {name!r}, which {message}")

    def _new_registry(self) -> Registry:
        """This host's registry, with the core's tables claimed."""
        self.registry = registry = Registry(self.os, self.pm, self.config_source)
        # plugins read their tables while registering: merged by the schemas claimed so far
        self.config_source.schema_for = lambda table: registry.config_schemas.get(
            table, (None, None)
        )[1]
        registry.current_plugin = CORE
        for name, schema in CORE_TABLES.items():
            registry.add_config(name, schema, extensible=name == FILES_TABLE)
        registry.current_plugin = None
        return registry

    def _register_tools(self, recorder: Any = None) -> None:
        """``callgate_register_tools`` through ``pm.hook``, the registry knowing whose
        implementation is running (each is wrapped for the one call, then restored)."""
        registry = self._new_registry()
        if recorder is not None:
            recorder.host = self
            registry.on_plugin = recorder.switch
        # each plugin's implementation runs through its companion (`_pipeline.hooks`), which
        # tells the registry whose it is and names the plugin in a failure
        self.pm.hook.callgate_register_tools(registry=registry, host=self)
        registry.on_plugin = None
        registry.freeze()

    def _configure(self, surface: str | None) -> None:
        registry = self.registry
        claimed = registry.config_schemas
        self.warnings.extend(_config.check_unclaimed(self.config_source, set(claimed)))
        self.warnings.extend(registry.warnings)
        for note in self.config_source.notes:
            log.warning(note)
            self.warnings.append(note)
        self._check_store()
        #: the core's ``[files]`` table, as the gate and the file API apply it
        self.files_policy = FilesPolicy(
            registry.table(FILES_TABLE), self.config_source, registry.protected
        )
        for name in self.files_policy.fallback_encodings:
            from .._files.declared import fallback_problem  # a table that lists some only

            problem = fallback_problem(name)
            if problem:  # fails boot naming the file, the key and the entry's line
                raise registry.config_error(problem, (FILES_TABLE, "fallback_encodings"), name)
        self.permissions = RuleEngine.from_host(self)
        self.warnings.extend(self.permissions.warnings)
        if not registry.names():
            self._force(NO_TOOLS)
        elif not self._implements("callgate_confine_process"):
            log.warning(UNCONFINED)
            self.warnings.append(UNCONFINED)
        surface_cfg = registry.table("surface")
        mode = surface or surface_cfg["mode"]
        if mode not in ("lean", "full"):
            raise BootError(f'surface must be "lean" or "full", not {mode!r}')
        proxies = self.routes()
        if mode == "lean" and not proxies and registry.names():
            self._force(
                "the capability plugin is not loaded, so hidden tools would be "
                "unreachable (no registered tool reaches them): the surface mode is "
                "full"
            )
            mode = "full"
        self.surface_mode = mode
        show, hide = set(surface_cfg["show"]), set(surface_cfg["hide"])
        for proxy in proxies:
            if proxy.name in hide:
                raise self.config_source.error(
                    f"{proxy.name} cannot be hidden: it is how hidden tools are reached",
                    ("surface", "hide"),
                )
        for name in sorted((show | hide) - set(registry.names())):
            msg = f"[surface] names {name!r}, which is not a registered tool"
            log.warning(msg)
            self.warnings.append(msg)
        for spec in registry.tools():
            missing = tuple(h for h in spec.requires_hooks if not self._implements(h))
            if missing:
                self._unhooked[spec.name] = missing
        visible = []
        for spec in sorted(registry.tools(), key=_surface_key):
            if spec.visibility == "alias":
                continue
            shown = spec.visibility == "surface" or mode == "full"
            if spec.name in show:
                shown = True
            if spec.name in hide:
                shown = False
            if shown:
                visible.append(spec.name)
        self._visible = visible
        self.registry.describe(visible)

    def _implements(self, hook: str) -> bool:
        """Whether a plugin implements ``hook`` (a listing host: as the manifest says)."""
        if self._declared_hooks is not None:
            return hook in self._declared_hooks
        return self.hooks.implemented(hook)

    def _force(self, message: str) -> None:
        log.warning(message)
        self.warnings.append(message)
        self.forced.append(message)

    # --- config ---------------------------------------------------

    def config(self, table: str) -> dict[str, Any]:
        """A config table with defaults applied (``{}`` for a table nobody claimed)."""
        return self.registry.table(table)

    def plugin_config(self, plugin: str | None) -> dict[str, Any]:
        """The first table the plugin claimed (``ctx.config``)."""
        tables = self.registry.tables_of(plugin)
        return self.registry.table(tables[0]) if tables else {}

    def plugin_config_value(self, table: str, key: str, default: Any) -> Any:
        return self.registry.table(table).get(key, default)

    def from_untrusted_workspace(self, *key: str) -> bool:
        """Whether a workspace config the user config does not trust set ``key`` (table
        first): what it asks for is then held to the user's policy (``[mcp_servers]``)."""
        return self.config_source.from_untrusted_workspace(tuple(key))

    def config_file(self, *key: str) -> str | None:
        """The config file that set ``key`` (table first), else the one boot read last."""
        return self.registry.config_file(*key)

    # --- the surface ---------------------------------------------------

    def visible_names(self, *, assume_hooks: bool = False) -> list[str]:
        """The provider-visible tools, in surface order (``surface_order``, then by name).

        A tool whose ``requires_hooks`` no plugin implements is left out: no session could
        have it (`unhooked` says why). ``assume_hooks`` keeps it, as the contract does."""
        if assume_hooks:
            return list(self._visible)
        return [n for n in self._visible if n not in self._unhooked]

    def unhooked(self) -> dict[str, tuple[str, ...]]:
        """``{tool: hooks it needs that no plugin implements}``: registered tools that no
        session of this host has (``compress`` without a conversation, ``task`` without a
        subagent runner)."""
        return dict(self._unhooked)

    def session_tools(self) -> list[ToolSpec]:
        """The registered tools a session may have (before each one's ``available``)."""
        return [s for s in self.registry.tools() if s.name not in self._unhooked]

    def routes(self) -> list[ToolSpec]:
        """The tools that reach hidden tools (a `ProxyRoute`), in surface order."""
        return sorted((s for s in self.registry.tools() if s.route is not None), key=_surface_key)

    def surface_specs(self) -> list[ToolSpec]:
        """The visible tools, in surface order (`callgate_providers.surface` renders them)."""
        return [s for n in self.visible_names() if (s := self.registry.get(n)) is not None]

    # --- validation cache ---------------------------------------------------

    def compiled(self, spec: ToolSpec) -> Compiled:
        """The compiled validator of a tool's schema, cached by its canonical bytes."""
        known = self._registered.get(spec.name)
        if known is not None and known[0] is spec:  # every call of a registered tool
            return known[1]
        if self.registry.get(spec.name) is spec:
            found = self.registry.compiled(spec.name)
            certain = found.fast if found.error is None and not _has_pattern(spec.schema) else None
            self._registered[spec.name] = (spec, found, certain)
            return found
        held = self._unregistered.get(id(spec))
        if held is not None and held[0] is spec:
            return held[1]
        key = (
            canonical_bytes(spec.schema)
            if isinstance(spec.schema, dict)
            else repr(spec.schema).encode()
        )
        found = self._compiled.get(key)
        if found is None:
            fp = short_fingerprint(spec.schema) if isinstance(spec.schema, dict) else "0" * 16
            found = self._compiled[key] = compile_schema(spec.schema, fp)
        if len(self._unregistered) >= _UNREGISTERED_HELD:
            self._unregistered.clear()  # specs made per call stay bounded
        self._unregistered[id(spec)] = (spec, found)
        return found

    def certainly_valid(self, spec: ToolSpec) -> Callable[[Any], bool] | None:
        """For a registered tool whose schema holds no ``pattern``: its fast check, whose
        ``True`` needs no full validation (patterns run under a time budget, in it)."""
        known = self._registered.get(spec.name)
        if known is None or known[0] is not spec:
            self.compiled(spec)
            known = self._registered.get(spec.name)
        return known[2] if known is not None and known[0] is spec else None

    # --- sessions ---------------------------------------------------

    def open_session(
        self,
        workspace: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        origin: str | None = None,
        *,
        resume: str | None = None,
        name: str | None = None,
        principal: str | None = None,
        executor: Sequence[str] | Executor | None = None,
        show: Sequence[str] = (),
    ) -> Session:
        """Open a session on ``workspace`` (use ``async with`` or ``await session.close()``).

        ``resume`` continues a stored session (its id, name or a unique id prefix; an
        unknown one raises `callgate.store.UnknownSession`); ``name`` joins the session of
        that name, creating it on first use. ``principal`` names who the session belongs to
        (default: the operating-system user, `callgate.store.local_principal`); the session
        tools and ``resume``/``name`` reach only that principal's stored sessions. See
        docs/sessions.md for what comes back.

        ``executor`` says where the session's tools run (docs/executors.md): ``None`` (the
        user config's ``[executor] transport``, else here), an argv (a worker's transport:
        ``workspace`` is then the workspace as the worker sees it, and need not exist
        here), ``[]`` (here, whatever the config says) or an `Executor`. ``show`` puts hidden
        tools on this session's surface (a native rendering's `callgate_providers.shows`),
        unless the user's ``[surface] hide`` names them."""
        if self._declared_hooks is not None:
            raise BootError(
                "this host was booted to list tools (Host.boot(listing=True)) from the plugin "
                "manifest and runs none; boot it without listing to open sessions"
            )
        if resume is not None and name is not None:
            raise ValueError("pass resume or name, not both")
        from .._session.session import Session  # with the pipeline: on first open, not at boot

        bound: Executor | None = None
        if executor is None:
            executor = self.config("executor")["transport"]
            if self.config("executor")["url"]:
                bound = self._socket_executor(workspace, bool(executor))
                executor = bound
        if isinstance(executor, Sequence) and not isinstance(executor, str):
            if executor:
                from .._executor.remote import RemoteExecutor

                bound = RemoteExecutor(
                    list(executor),
                    os.fspath(workspace),
                    connect_timeout=self.config("executor")["connect_timeout_s"],
                    detach_grace=self.config("executor")["detach_grace_s"],
                )
        elif isinstance(executor, str):
            raise TypeError("executor is an argv list, [] or an Executor, not a string")
        else:
            bound = executor
        if bound is None and not os.path.isdir(workspace):
            raise FileNotFoundError(f"workspace {os.fspath(workspace)} is not a directory")
        return Session(
            self,
            workspace,
            session_dir,
            origin,
            resume=resume,
            name=name,
            principal=principal,
            executor=bound,
            show=show,
        )

    def _socket_executor(self, workspace: str | os.PathLike[str], transport: bool) -> Executor:
        """The executor of ``[executor] url``: a worker listening on a websocket, its token
        from ``token_file`` or ``token_env`` (docs/executors.md)."""
        from .._executor.remote import RemoteExecutor
        from .._executor.websocket import SocketLink

        table = self.config("executor")
        if transport:
            raise ValueError("[executor] sets both transport and url: a session has one worker")
        timeout = table["connect_timeout_s"]
        link = SocketLink(
            table["url"], table["token_file"] or None, table["token_env"] or None, timeout
        )
        return RemoteExecutor([table["url"]], os.fspath(workspace), link=link)

    def worker_boot(self) -> dict[str, Any]:
        """How a worker of this host's sessions boots (`_executor.protocol`'s
        ``initialize``): this host's config tables, as its user config (the policy the
        worker enforces is this host's), the entry points and plugin modules it loaded, its
        surface and OS. Tables that only a host uses (``executor``, ``sessions``, ``trust``,
        ``plugins``) stay here. `ValueError` when a plugin that confines programs cannot
        be booted there (an object, not a module or an entry point)."""
        from types import ModuleType

        local_only = {"executor", "sessions", "trust", "plugins"}
        tables = {
            name: self.config(name)
            for name in self.registry.config_schemas
            if name not in local_only
        }
        entry_points, modules = [], []
        for name, plugin in self.pm.list_name_plugin():
            source = self._plugin_sources.get(name, (None, ""))[1]
            if source.startswith("entry point"):
                entry_points.append(name)
            elif isinstance(plugin, ModuleType):
                modules.append(plugin.__name__)
        # a sandbox the worker cannot boot would leave its programs unconfined: refuse
        for impl in self.pm.hook.callgate_confine_process.get_hookimpls():
            name = impl.plugin_name
            shipped = name in entry_points or (
                isinstance(impl.plugin, ModuleType) and impl.plugin.__name__ in modules
            )
            if not shipped:
                raise ValueError(
                    f"plugin {name!r} confines programs (callgate_confine_process) but is an "
                    "object, not a module or an entry point, so a worker cannot boot it and "
                    "the worker's programs would run unconfined: register it as a module or "
                    "an entry point, or run the session here"
                )
        return {
            "config": tables,
            "environ": self.worker_environ(),
            "entry_points": sorted(entry_points),
            "modules": sorted(modules),
            "surface": self.surface_mode,
            "os": self.os,
        }

    def worker_environ(self) -> dict[str, str]:
        """The host variables a worker of this host's sessions is handed in its handshake:
        those a plugin passes to the programs it starts (`callgate_program_environment`,
        under this host's config) that the transport's own environment lacks (the spawn
        door drops secret-looking variables from it). So secrets reach the worker only
        when the user's config lets a plugin pass them, and then exactly those."""
        from .. import process

        transport = process.Environment().build()
        handed: dict[str, str] = {}
        for spec in self.pm.hook.callgate_program_environment(host=self):
            if spec is None:
                continue
            for name, value in spec.build().items():
                if name not in transport and os.environ.get(name) == value:
                    handed[name] = value
        return handed

    def execution_facts(self) -> list[ExecutionFact]:
        """The writer and destructive calls every session of this host ran, oldest first
        (`callgate.host.ExecutionFact`: session, profile, tool, leased paths, when, outcome)."""
        return self._facts.facts()

    def record_fact(self, fact: ExecutionFact) -> None:
        """Keep one writer's or destructive call's fact (the pipeline records each)."""
        self._facts.add(fact)

    # --- the session store ---------------------------------------------------

    @property
    def store_location(self) -> str:
        """Where this host's session store is (``[sessions] store``, else the default)."""
        from .._store.locations import resolve_location

        return resolve_location(
            self.config("sessions")["store"] or None, self.config_file("sessions", "store")
        )

    def _check_store(self) -> None:
        """A relative ``[sessions] store`` is relative to the config file that set it; set
        from a mapping (no file), it is a config error naming the key, at boot."""
        store = self.config("sessions")["store"]
        if not store:  # the store's module with a configured store only
            return
        from .._store.locations import is_url

        if is_url(store) or os.path.isabs(os.path.expanduser(store)):
            return
        if self.config_file("sessions", "store") is None:
            raise self.config_source.error(
                f"{store!r} is a relative path, and this config is not a file it could be "
                "relative to; give an absolute path (or a store URL)",
                ("sessions", "store"),
            )

    def session_store(self) -> tuple[Any, Any]:
        """The session store and its writer (opened on first use; `StoreError` if it
        cannot be)."""
        from .._store.locations import opened

        return opened(self.store_location)

    @property
    def store(self) -> Any:
        """The session store's read API (`callgate.store.SessionStore`), opened on first use."""
        return self.session_store()[0]

    # --- introspection ---------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every registered plugin: name, version, its tools, where it came from."""
        out = []
        by_plugin: dict[str, list[str]] = {}
        for spec in [*self.registry.tools(), *self.registry.other_os_tools()]:
            by_plugin.setdefault(spec.plugin or "", []).append(spec.name)
        names = [CORE, *(name for name, _plugin in self.pm.named_plugins())]
        for name in names:
            version, source = self._plugin_sources.get(name, (None, "in process"))
            out.append(
                PluginInfo(
                    name,
                    version,
                    tuple(sorted(by_plugin.get(name, []))),
                    source,
                    self.registry.info(name),
                )
            )
        return sorted(out, key=lambda p: p.name)


def _has_pattern(schema: Any) -> bool:
    """Whether a ``pattern`` keyword appears anywhere in ``schema``."""
    if isinstance(schema, dict):
        return isinstance(schema.get("pattern"), str) or any(
            _has_pattern(v) for v in schema.values()
        )
    if isinstance(schema, list):
        return any(_has_pattern(v) for v in schema)
    return False


def _pick_os(value: str) -> str:
    if value == "auto":
        return "windows" if sys.platform == "win32" else "posix"
    if value not in ("posix", "windows"):
        raise BootError(f'os must be "auto", "posix" or "windows", not {value!r}')
    return value


def _plugin_name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or getattr(obj, "name", None) or type(obj).__name__


def _dist_version(name: str) -> str | None:
    return metadata.version(name)


__all__ = ["CORE", "Host", "PluginInfo"]
