"""The tool registry: names, canonical schemas, visibility, aliases, config tables.

Plugins receive the `Registry` in ``callgate_register_tools`` and add to it;
once boot has finished it is frozen and the host reads from it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import BootError
from ._fastcheck import compile_fast
from ._schema import canonical_schema, short_fingerprint
from ._spec import NAME_RULE, PLATFORMS, VISIBILITIES, ToolSpec

if TYPE_CHECKING:  # jsonschema (~35 ms) is imported when the first schema compiles
    import jsonschema

log = logging.getLogger("callgate")


@attrs.frozen
class Compiled:
    """A tool schema compiled once: its validator, or why it does not compile."""

    validator: jsonschema.protocols.Validator | None
    error: str | None
    short_fingerprint: str
    fast: Callable[[Any], bool] | None = None


def compile_schema(schema: Any, short_fp: str) -> Compiled:
    """Check ``schema`` against the metaschema of the dialect it declares (``$schema``;
    2020-12 when it declares none) and compile it (never raises).

    Refused here, as configuration errors: a ``$ref`` the schema cannot resolve by
    itself (callgate never fetches one) and a ``pattern`` the regex engine cannot
    compile. See `_dialects` for the time budget every pattern runs under.
    """
    import jsonschema

    from . import _dialects

    try:
        cls = _dialects.validator_class(schema)
        cls.check_schema(schema)
        canonical = canonical_schema(schema)
        outside = _dialects.outside_reference(canonical, cls)
        if outside is not None:
            return Compiled(None, f"$ref {outside[:200]!r} points outside the schema; "
                            "callgate never fetches a schema, so every reference must resolve "
                            "within it", short_fp)
        problem = _dialects.bad_pattern(canonical)
        if problem is not None:
            return Compiled(None, problem, short_fp)
        validator = cls(canonical, registry=_dialects.empty_registry())
        # The fast check speaks 2020-12; other dialects always take the full validator.
        fast = compile_fast(canonical) if _dialects.dialect_uri(schema) == _dialects.LATEST \
            else None
        return Compiled(validator, None, short_fp, fast)
    except jsonschema.SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.path) if exc.path else "/"
        return Compiled(None, f"{exc.message} at {where}", short_fp)
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:
        return Compiled(None, str(exc) or type(exc).__name__, short_fp)


class Registry:
    """Every tool of one host, with the plugin each came from."""

    def __init__(self, os_name: str, plugin_manager: Any) -> None:
        self.os = os_name
        self._pm = plugin_manager
        self._tools: dict[str, ToolSpec] = {}
        self._fingerprints: dict[str, str] = {}
        self._compiled: dict[str, Compiled] = {}
        self._compile_lock = threading.Lock()
        self._config_schemas: dict[str, tuple[str, dict[str, Any]]] = {}
        self._session_extensions: dict[str, Callable[[Any], Any]] = {}
        self._other_os: dict[str, ToolSpec] = {}
        self._info: dict[str, list[str]] = {}
        self.current_plugin: str | None = None
        self._frozen = False

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
            raise BootError(f"plugin {plugin}: tool {spec.name}: visibility must be one of "
                            f"{', '.join(VISIBILITIES)}")
        if not spec.platforms or not spec.platforms <= PLATFORMS:
            raise BootError(f"plugin {plugin}: tool {spec.name}: platforms must be a non-empty "
                            "subset of posix, windows")
        if spec.visibility == "alias" and not spec.alias_of:
            raise BootError(f"plugin {plugin}: tool {spec.name}: an alias needs alias_of")
        if spec.execute is None and not spec.alias_of:
            raise BootError(f"plugin {plugin}: tool {spec.name} has no execute function")
        if not isinstance(spec.schema, dict) or spec.schema.get("type") != "object":
            raise BootError(f"plugin {plugin}: tool {spec.name}: schema root must be "
                            '{"type": "object", ...}')
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

    def add_config(self, table: str, schema: dict[str, Any]) -> None:
        """Claim a ``callgate.toml`` table; ``schema`` (JSON Schema, with defaults) validates it."""
        self._check_open()
        plugin = self.current_plugin or "<core>"
        if table in self._config_schemas and self._config_schemas[table][0] != plugin:
            raise BootError(f"config table [{table}] is claimed by plugin "
                            f"{self._config_schemas[table][0]} and by plugin {plugin}")
        self._config_schemas[table] = (plugin, schema)

    def add_session_extension(self, name: str, factory: Callable[[Any], Any]) -> None:
        """Make ``session.<name>`` a per-session object built by ``factory(session)``."""
        self._check_open()
        if name in self._session_extensions:
            raise BootError(f"session extension {name!r} is added twice")
        self._session_extensions[name] = factory

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
        for spec in self._tools.values():
            if spec.alias_of:
                primary = self._tools.get(spec.alias_of)
                if primary is None:
                    raise BootError(f"plugin {spec.plugin}: alias {spec.name} points to "
                                    f"{spec.alias_of!r}, which is not registered")
                if spec.execute is None and spec.alias_args is None:
                    raise BootError(f"plugin {spec.plugin}: alias {spec.name} needs alias_args "
                                    "or an execute of its own")
            self._fingerprints[spec.name] = short_fingerprint(spec.schema)
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
                raise BootError(f"plugin {spec.plugin}: tool {name}: describe() failed: "
                                f"{type(exc).__name__}: {exc}") from exc
            if not isinstance(text, str) or not text.strip():
                raise BootError(f"plugin {spec.plugin}: tool {name}: describe() must return "
                                "a non-empty description")
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
                    found = compile_schema(spec.schema, self._fingerprints[name])
                    if found.error is not None:
                        log.warning("tool %s (plugin %s) has a schema that does not compile: %s",
                                    name, spec.plugin, found.error)
                    self._compiled[name] = found
        return found

    def short_fingerprint(self, name: str) -> str:
        return self._fingerprints[name]

    @property
    def config_schemas(self) -> dict[str, tuple[str, dict[str, Any]]]:
        return dict(self._config_schemas)

    @property
    def session_extensions(self) -> dict[str, Callable[[Any], Any]]:
        return dict(self._session_extensions)

    def info(self, plugin: str) -> tuple[str, ...]:
        """The `add_info` lines of one plugin, in the order it added them."""
        return tuple(self._info.get(plugin, ()))

    def other_os_tools(self) -> list[ToolSpec]:
        """Tools registered for another OS than this host's (kept out of every surface)."""
        return [self._other_os[n] for n in sorted(self._other_os)]

    def _check_open(self) -> None:
        if self._frozen:
            raise BootError("the registry is frozen: tools are added during boot only")
