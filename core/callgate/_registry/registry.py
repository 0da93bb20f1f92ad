"""`Registry`: what plugins add at boot (tools, config tables, session extensions, hook specs,
permission names), checked as it is added and frozen once boot is done.

A plugin receives the host's registry in ``callgate_register_tools``::

    @hookimpl
    def callgate_register_tools(registry: Registry, host: Host) -> None:
        config = registry.add_config("append", CONFIG)   # validated, defaults applied
        registry.add(ToolSpec(...))

The registry knows which plugin is registering (the host tells it), so every
error names the plugin, and every tool, table and extension is recorded under it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from .._config import load as _config
from .._model.canonical import short_fingerprint
from .._model.deferred import Deferred
from .._model.errors import BootError, ConfigError
from .._model.keys import SessionKey
from .._model.spec import NAME_RULE, PLATFORMS, VISIBILITIES, ToolSpec
from .._permissions.rules import BUILTIN_KINDS
from .._validation.compiled import Compiled, compile_schema

if TYPE_CHECKING:
    import pluggy

    from .._config.layers import LayeredSource
    from .._permissions.boot import RuleNames
    from .._permissions.rules import SubjectKind

log = logging.getLogger("callgate")

T = TypeVar("T")


class Registry:
    """Every tool of one host, with the plugin each came from, and what plugins claimed."""

    def __init__(
        self,
        os_name: str,
        plugin_manager: pluggy.PluginManager,
        config: _config.ConfigSource | LayeredSource | None = None,
    ) -> None:
        #: ``"posix"`` or ``"windows"``: the OS this host's surface is for.
        self.os = os_name
        self._pm = plugin_manager
        self._source = config if config is not None else _config.ConfigSource({})
        self._tools: dict[str, ToolSpec] = {}
        self._fingerprints: dict[str, str] = {}
        self._compiled: dict[str, Compiled] = {}
        self._compile_lock = threading.Lock()
        self._config_schemas: dict[str, tuple[str, dict[str, Any]]] = {}
        self._tables: dict[str, dict[str, Any]] = {}
        self._session_extensions: dict[str, Callable[[Any], Any]] = {}
        #: core tables plugins may add keys to: ``{table: [(plugin, properties)]}``
        self._extensible: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        #: keys of an extensible table that no loaded plugin declares (boot warnings)
        self.warnings: list[str] = []
        self._rule_names: list[tuple[str, RuleNames]] = []
        self._subject_kinds: dict[str, tuple[str, SubjectKind]] = {}
        self._other_os: dict[str, ToolSpec] = {}
        self._info: dict[str, list[str]] = {}
        self._strict_denials: list[str] = []
        self._protected: list[tuple[str, str]] = []
        self._current: str | None = None
        #: told ``(old, new)`` when `current_plugin` changes (a listing boot records)
        self.on_plugin: Callable[[str | None, str | None], None] | None = None
        self._frozen = False

    @property
    def current_plugin(self) -> str | None:
        """The plugin whose ``callgate_register_tools`` is running (set by the host)."""
        return self._current

    @current_plugin.setter
    def current_plugin(self, name: str | None) -> None:
        if self.on_plugin is not None:
            self.on_plugin(self._current, name)
        self._current = name

    # --- what plugins call ---------------------------------------------------

    def add(self, spec: ToolSpec) -> ToolSpec:
        """Register a tool. A name registered twice is a boot error naming both plugins."""
        self._check_open()
        plugin = spec.plugin or self.current_plugin or "<unknown>"
        if not NAME_RULE.match(spec.name):
            raise BootError(
                f"plugin {plugin}: tool name {spec.name!r} does not match "
                f"{NAME_RULE.pattern} (the rule every provider accepts)"
            )
        if spec.visibility not in VISIBILITIES:
            raise BootError(
                f"plugin {plugin}: tool {spec.name}: visibility must be one of "
                f"{', '.join(VISIBILITIES)}"
            )
        if not spec.platforms or not spec.platforms <= PLATFORMS:
            raise BootError(
                f"plugin {plugin}: tool {spec.name}: platforms must be a non-empty "
                "subset of posix, windows"
            )
        if spec.visibility == "alias" and not spec.alias_of:
            raise BootError(f"plugin {plugin}: tool {spec.name}: an alias needs alias_of")
        if spec.execute is None and not spec.alias_of:
            raise BootError(f"plugin {plugin}: tool {spec.name} has no execute function")
        if not isinstance(spec.schema, dict) or spec.schema.get("type") != "object":
            raise BootError(
                f'plugin {plugin}: tool {spec.name}: schema root must be {{"type": "object", ...}}'
            )
        for field in attrs.fields(ToolSpec):  # declared code: its module must be there
            value = getattr(spec, field.name)
            if type(value) is Deferred and not value.exists():
                raise BootError(
                    f"plugin {plugin}: tool {spec.name}: {field.name} names {value.ref}, "
                    f"whose module {value.module_name} is not installed"
                )
        if spec.output_schema is not None and (
            not isinstance(spec.output_schema, dict) or spec.output_schema.get("type") != "object"
        ):
            raise BootError(
                f"plugin {plugin}: tool {spec.name}: output_schema root must be "
                '{"type": "object", ...}'
            )
        existing = self._tools.get(spec.name) or self._other_os.get(spec.name)
        if existing is not None:
            raise BootError(
                f"tool {spec.name!r} is registered twice: by plugin {existing.plugin} and by "
                f"plugin {plugin}; remove or block one of them"
            )

        spec = attrs.evolve(spec, plugin=plugin)
        if self.os not in spec.platforms:
            self._other_os[spec.name] = spec
            return spec
        self._tools[spec.name] = spec
        return spec

    def add_config(
        self, table: str, schema: Mapping[str, Any], *, extensible: bool = False
    ) -> dict[str, Any]:
        """Claim a ``callgate.toml`` table; returns it validated against ``schema`` (JSON Schema,
        with ``default``s applied). A bad key fails boot naming file, key and line. The first
        table a plugin claims is its tools' ``ctx.config``.

        ``extensible`` (the core's ``[files]``): plugins may add keys of their own
        (`extend_config`); the table is validated once every plugin has registered, and
        ``{}`` is returned now."""
        self._check_open()
        plugin = self.current_plugin or "<core>"
        if table in self._config_schemas and self._config_schemas[table][0] != plugin:
            raise BootError(
                f"config table [{table}] is claimed by plugin "
                f"{self._config_schemas[table][0]} and by plugin {plugin}"
            )
        self._config_schemas[table] = (plugin, dict(schema))
        if extensible:
            self._extensible[table] = []
            return {}
        found = self._tables[table] = _config.validate_table(self._source, table, schema)
        return found

    def extend_config(self, table: str, properties: Mapping[str, Any]) -> None:
        """Add keys to a table the core declares and enforces (``[files]``: callgate-files
        adds ``watch``), each with its JSON Schema and its ``x-workspace`` policy. The
        table's values are read with `Host.config` once boot is done. A key declared twice,
        or a table that takes no keys from plugins, fails boot."""
        self._check_open()
        plugin = self.current_plugin or "<unknown>"
        if table not in self._extensible:
            open_tables = ", ".join(f"[{t}]" for t in sorted(self._extensible)) or "none"
            raise BootError(
                f"plugin {plugin}: [{table}] takes no keys from plugins (tables "
                f"that do: {open_tables}); claim a table of your own"
            )
        owner, schema = self._config_schemas[table]
        declared = dict(schema.get("properties", {}))
        clash = sorted(set(properties) & set(declared))
        if clash:
            raise BootError(f"plugin {plugin}: [{table}] {clash[0]} is declared already")
        self._extensible[table].append((plugin, dict(properties)))
        self._config_schemas[table] = (owner, {**schema, "properties": {**declared, **properties}})

    def config_error(
        self, message: str, key: Sequence[str | int], value: str | None = None
    ) -> ConfigError:
        """A `ConfigError` naming the config file, ``key`` (table first, e.g. ``("shell",
        "path")``) and its line: the line of the list item ``value`` when given. For the
        checks a schema cannot make (a path that must exist, a binary that must be there)."""
        path = tuple(key)
        error = self._source.error(message, path)
        if value is None:
            return error
        file, line = self._source.locate(path[:2], value)
        if line is None:
            return error
        return ConfigError(error.reason, file=file or error.file, key=error.key, line=line)

    def config_file(self, *key: str) -> str | None:
        """The config file that set ``key`` (``"web", "ca_bundle"``: relative paths in it are
        taken from its directory); with no key, the file boot read last. ``None`` for a
        config given as a mapping."""
        if not key:
            file = self._source.file
        elif isinstance(self._source, _config.LayeredSource):
            layer = self._source.origin(tuple(key))
            file = layer.file if layer is not None else None
        else:
            file = self._source.locate(tuple(key))[0]
        return file if file and os.path.isfile(file) else None

    def add_session_extension(self, key: SessionKey[T], factory: Callable[[Any], T]) -> None:
        """Make ``session.extension(key)`` a per-session object, built by ``factory(session)``
        on first use (`callgate.SessionKey`)."""
        self._check_open()
        if not isinstance(key, SessionKey):
            raise BootError(
                f"plugin {self.current_plugin}: a session extension is named by a "
                f"callgate.SessionKey, not {key!r}"
            )
        if key.name in self._session_extensions:
            raise BootError(f"session extension {key.name!r} is added twice")
        self._session_extensions[key.name] = factory

    def deny_in_read_only_children(self, *patterns: str) -> None:
        """Tool names (``fnmatch`` globs allowed) that a strict read-only child never runs,
        whatever their read-only flag says: a question to the user, a todo list, a fleet,
        background jobs (`callgate.ChildProfile`). The subagent plugin names them."""
        self._check_open()
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern:
                raise BootError("deny_in_read_only_children takes non-empty names or globs")
            self._strict_denials.append(pattern)

    @property
    def read_only_child_denials(self) -> tuple[str, ...]:
        """Every `deny_in_read_only_children` pattern, in registration order."""
        return tuple(self._strict_denials)

    def protect(self, pattern: str, why: str) -> None:
        """Protect the paths ``pattern`` names in every write root (a path glob as in
        permission rules, relative to the root: ``.claude/settings.json``, ``.codex/**``) as
        ``callgate.toml`` is: write tools refuse them (``FS_PROTECTED``, saying ``why``) and
        the sandbox mounts the existing ones read-only. For a plugin that reads files of the
        workspace as configuration (a model must not plant what the next session obeys)."""
        self._check_open()
        if not isinstance(pattern, str) or not pattern.strip() or not why:
            raise BootError("protect takes a path pattern and the reason it is protected")
        self._protected.append((pattern.strip(), why))

    @property
    def protected(self) -> tuple[tuple[str, str], ...]:
        """Every `protect` pattern with its reason, in registration order."""
        return tuple(self._protected)

    def add_rule_names(self, recognize: RuleNames) -> None:
        """Answer for permission-rule names that no registered tool carries: the other OS's
        shell, MCP tools and connects. ``recognize(name)`` returns ``False`` (not yours),
        ``True`` (a name rules may use) or a warning about the rule (it cannot match here)."""
        self._check_open()
        self._rule_names.append((self.current_plugin or "<unknown>", recognize))

    def add_subject_kind(self, kind: SubjectKind) -> None:
        """Supply a permission subject kind (`callgate.permissions.SubjectKind`: how
        ``Tool(spec)`` rules judge its values, and its read-only verdict); the shell
        supplies ``command``. The same kind added again is fine; another kind under a
        taken or built-in name is a boot error."""
        self._check_open()
        plugin = self.current_plugin or "<unknown>"
        if kind.name in BUILTIN_KINDS:
            raise BootError(f"plugin {plugin}: subject kind {kind.name!r} is built in")
        owner, existing = self._subject_kinds.get(kind.name, (plugin, kind))
        if existing != kind:
            raise BootError(
                f"subject kind {kind.name!r} is supplied by plugin {owner} and "
                f"differently by plugin {plugin}; remove or block one of them"
            )
        self._subject_kinds.setdefault(kind.name, (plugin, kind))

    def add_subject_kind_name(self, name: str) -> None:
        """A subject kind known by name only: a listing boot's, from the plugin manifest
        (its tools list; no rule is judged with it)."""
        self._check_open()
        self._subject_kinds.setdefault(name, (self.current_plugin or "<unknown>", None))  # type: ignore[arg-type]

    def add_info(self, line: str) -> None:
        """A line ``callgate plugins`` shows under the plugin: a state chosen at boot that
        its tools do not show (the sandbox's active backend, ...)."""
        self._check_open()
        self._info.setdefault(self.current_plugin or "<unknown>", []).append(line)

    def add_hookspecs(self, module_or_class: Any) -> None:
        """Add a plugin's own hook specs (for what it needs from the integrator)."""
        self._pm.add_hookspecs(module_or_class)

    # --- what the host reads ---------------------------------------------------

    def freeze(self) -> None:
        for table, extensions in self._extensible.items():
            self._tables[table] = self._extensible_table(table, bool(extensions))
        for spec in (*self._tools.values(), *self._other_os.values()):
            kind = spec.permission_subject.kind if spec.permission_subject else None
            if kind is not None and kind not in BUILTIN_KINDS and kind not in self._subject_kinds:
                raise BootError(
                    f"plugin {spec.plugin}: tool {spec.name}: no loaded plugin "
                    f"supplies its permission subject kind {kind!r} "
                    "(Registry.add_subject_kind; the shell plugin supplies "
                    "'command')"
                )
        for spec in self._tools.values():
            if spec.alias_of:
                primary = self._tools.get(spec.alias_of)
                if primary is None:
                    raise BootError(
                        f"plugin {spec.plugin}: alias {spec.name} points to "
                        f"{spec.alias_of!r}, which is not registered"
                    )
                if spec.execute is None and spec.alias_args is None:
                    raise BootError(
                        f"plugin {spec.plugin}: alias {spec.name} needs alias_args "
                        "or an execute of its own"
                    )
        self._frozen = True

    def describe(self, visible: list[str]) -> None:
        """Give every tool with a ``describe`` its final description, now that the tools
        and the surface are known (host boot calls this once, after choosing the surface)."""
        registered, shown = frozenset(self._tools), frozenset(visible)
        for name, spec in list(self._tools.items()):
            if spec.describe is None:
                continue
            try:
                text = spec.describe(registered, shown)
            except Exception as exc:
                raise BootError(
                    f"plugin {spec.plugin}: tool {name}: describe() failed: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if not isinstance(text, str) or not text.strip():
                raise BootError(
                    f"plugin {spec.plugin}: tool {name}: describe() must return "
                    "a non-empty description"
                )
            self._tools[name] = attrs.evolve(spec, description=text)

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return sorted(self._tools)

    def tools(self) -> list[ToolSpec]:
        return [self._tools[n] for n in sorted(self._tools)]

    def compiled(self, name: str) -> Compiled:
        """The tool's schema compiled once, on first use (boot stays cheap): its validator,
        the fast certainly-valid check, or why the schema does not compile."""
        found = self._compiled.get(name)
        if found is None:
            with self._compile_lock:
                found = self._compiled.get(name)
                if found is None:
                    spec = self._tools[name]
                    found = compile_schema(spec.schema, self.short_fingerprint(name))
                    if found.error is not None:
                        log.warning(
                            "tool %s (plugin %s) has a schema that does not compile: %s",
                            name,
                            spec.plugin,
                            found.error,
                        )
                    self._compiled[name] = found
        return found

    def short_fingerprint(self, name: str) -> str:
        """The tool's schema's short fingerprint, computed on first use."""
        found = self._fingerprints.get(name)
        if found is None:
            found = self._fingerprints[name] = short_fingerprint(self._tools[name].schema)
        return found

    @property
    def config_schemas(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """``{table: (plugin, schema)}`` for every claimed table."""
        return dict(self._config_schemas)

    def table(self, name: str) -> dict[str, Any]:
        """A claimed table as validated (defaults applied); ``{}`` for a table nobody claimed."""
        return self._tables.get(name, {})

    def tables_of(self, plugin: str | None) -> list[str]:
        """The tables ``plugin`` claimed, in the order it claimed them."""
        return [t for t, (owner, _schema) in self._config_schemas.items() if owner == plugin]

    @property
    def session_extensions(self) -> dict[str, Callable[[Any], Any]]:
        return dict(self._session_extensions)

    def session_extension(self, key: SessionKey[T]) -> Callable[[Any], T]:
        """The factory registered for ``key``; `LookupError` when no loaded plugin adds it."""
        try:
            return self._session_extensions[key.name]
        except KeyError:
            raise LookupError(f"no loaded plugin adds the session extension {key.name!r}") from None

    def _extensible_table(self, table: str, extended: bool) -> dict[str, Any]:
        """An extensible table, validated against its keys and the plugins' additions. With
        no plugin adding keys, a key the core does not declare is a warning (it belongs to a
        plugin that is not loaded), not an error."""
        schema = self._config_schemas[table][1]
        if extended:
            return _config.validate_table(self._source, table, schema)
        declared = set(schema.get("properties", {}))
        found = _config.validate_table(
            self._source, table, {**schema, "additionalProperties": True}
        )
        for key in sorted(set(found) - declared):
            file, line = self._source.locate((table, key))
            where = f"{file}:{line}: " if file and line else ""
            message = f"{where}[{table}] {key} is not read by any loaded plugin; ignored"
            log.warning(message)
            self.warnings.append(message)
        return {k: v for k, v in found.items() if k in declared}

    def is_extensible(self, table: str) -> bool:
        """Whether plugins may add keys to ``table`` (`add_config(extensible=True)`)."""
        return table in self._extensible

    def extensions_of(self, plugin: str) -> list[list[Any]]:
        """``[table, properties]`` of each `extend_config` of ``plugin``."""
        return [
            [table, properties]
            for table, added in self._extensible.items()
            for owner, properties in added
            if owner == plugin
        ]

    def kinds_of(self, plugin: str) -> list[str]:
        """The names of the subject kinds ``plugin`` supplied."""
        return [name for name, (owner, _kind) in self._subject_kinds.items() if owner == plugin]

    def rule_names(self) -> list[tuple[str, RuleNames]]:
        """``(plugin, recognize)`` for every `add_rule_names`, in registration order."""
        return list(self._rule_names)

    def subject_kinds(self) -> dict[str, SubjectKind]:
        """The subject kinds plugins supplied (`add_subject_kind`), by name."""
        return {
            name: kind
            for name, (_plugin, kind) in self._subject_kinds.items()
            if kind is not None  # known by name only (a listing boot)
        }

    def info(self, plugin: str) -> tuple[str, ...]:
        """The `add_info` lines of one plugin, in the order it added them."""
        return tuple(self._info.get(plugin, ()))

    def other_os_tools(self) -> list[ToolSpec]:
        """Tools registered for another OS than this host's (kept out of every surface)."""
        return [self._other_os[n] for n in sorted(self._other_os)]

    def _check_open(self) -> None:
        if self._frozen:
            raise BootError("the registry is frozen: tools are added during boot only")


__all__ = ["Compiled", "Registry", "RuleNames", "compile_schema"]
