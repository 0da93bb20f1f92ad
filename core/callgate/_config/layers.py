"""The config layers (user, explicit, workspace) and how they combine into one config.

callgate reads up to two files: the **user config** (``config.toml`` in the
user's config directory: the user's own settings, never written by a model)
and, above it, either an **explicit** config (``--config FILE`` or
``Host.boot(config=...)``: what the person or program starting callgate asked
for) or the **workspace config** found in the workspace (``callgate.toml``,
else ``[tool.callgate]`` in ``pyproject.toml``: a file anyone who can write
the workspace, the model included, may have written).

An explicit config, and a workspace config the user config trusts
(``[trust] workspaces``), override the user config key by key. A workspace
config that is not trusted can only **tighten** it, and only where the key's
owner says how: each key declares it in its table's JSON Schema with the
``x-workspace`` keyword. **A key that declares nothing is user-only** (secure by
default): a plugin that forgets a key leaves it out of the workspace's reach::

    "user"             only the user (or an explicit or trusted config) may set it
    "add"              a list: the workspace may add entries, never remove them;
                       a map: it may add entries (taken whole: its owner asks
                       `LayeredSource.from_untrusted_workspace`), and change the
                       user's entries only as their own keys allow
    "subset"           a list: the workspace may keep only entries the user's has
    "min" / "max"      a number: the smaller / larger value wins
    [loose, ..., strict]   a scale: the stricter value wins
    "any"              a preference that grants nothing: the workspace's value wins
                       (never for a key with an ``x-kind``, below)

A table (an object schema with ``properties``) declares nothing itself: its
keys decide, each for itself. ``x-kind`` says what a key is, for the checks
that keep the dangerous ones user-only (`KIND_POLICIES`): ``program`` (what
runs, or how: commands, arguments, a server's settings), ``env`` (a child's
environment), ``path`` (a file or directory, possibly outside the workspace),
``store`` (where history is kept, or what it keeps), ``scope`` (how far the
tools reach: other workspaces, loopback, the network), ``limit`` (a bound on
time, size or count), ``allowlist`` (rules that permit) and ``denylist`` (rules
that refuse or hide).

A list marked ``"x-layers": "concat"`` (or ``"add"``) is joined across layers
instead of replaced. ``[tool.callgate]`` in ``pyproject.toml`` is never trusted,
even in a workspace ``[trust]`` lists: write tools may edit ``pyproject.toml``
(it is an ordinary project file), so only ``callgate.toml``, which they may not,
carries a trusted workspace's settings. Every value a workspace could not set is
a boot warning naming its file and line.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .source import EXPLICIT, USER, WORKSPACE, ConfigSource

if TYPE_CHECKING:
    from .._model.errors import ConfigError

POLICY = "x-workspace"
LAYERS = "x-layers"
KIND = "x-kind"
#: the named policies (a list is a scale)
POLICIES = frozenset({"user", "add", "subset", "min", "max", "any"})
#: what each ``x-kind`` lets a workspace that is not trusted do (``"scale"``: any scale)
KIND_POLICIES: dict[str, frozenset[str]] = {
    "program": frozenset({"user"}),
    "env": frozenset({"user"}),
    "store": frozenset({"user"}),
    "allowlist": frozenset({"user"}),
    "path": frozenset({"user", "subset"}),
    "scope": frozenset({"user", "scale"}),
    "limit": frozenset({"user", "min", "max"}),
    "denylist": frozenset({"user", "add"}),
}
#: the implicit policy of a table: its keys decide, each for itself
_KEYS = "keys"
USER_CONFIG_ENV = "CALLGATE_CONFIG_HOME"
USER_CONFIG_NAME = "config.toml"
TRUST_TABLE = "trust"

SchemaFor = Callable[[str], "Mapping[str, Any] | None"]
_MISSING = object()


def user_config_dir() -> str | None:
    """Where the user config lives: ``$CALLGATE_CONFIG_HOME`` when set (empty: no user
    config at all), else the platform's user config directory for ``callgate``
    (``~/.config/callgate`` on Linux, via ``platformdirs``)."""
    if USER_CONFIG_ENV in os.environ:
        value = os.environ[USER_CONFIG_ENV]
        return os.path.abspath(os.path.expanduser(value)) if value else None
    import platformdirs

    return platformdirs.user_config_dir("callgate", appauthor=False, roaming=True)


def user_config_path() -> str | None:
    """The user config file (it need not exist), or ``None`` when user config is off."""
    directory = user_config_dir()
    return os.path.join(directory, USER_CONFIG_NAME) if directory else None


def canonical_dir(path: str, base: str | None = None) -> str:
    """``~`` expanded, made absolute (against ``base``) and every symlink resolved."""
    expanded = os.path.expanduser(path)
    if base is not None and not os.path.isabs(expanded):
        expanded = os.path.join(base, expanded)
    return os.path.realpath(os.path.abspath(expanded))


def is_trusted(user: ConfigSource | None, workspace: str | os.PathLike[str]) -> bool:
    """Whether the user config's ``[trust] workspaces`` lists ``workspace`` (or a directory
    that holds it)."""
    if user is None:
        return False
    table = user.data.get(TRUST_TABLE)
    listed = table.get("workspaces") if isinstance(table, Mapping) else None
    if not isinstance(listed, list):
        return False
    root = canonical_dir(os.fspath(workspace))
    base = os.path.dirname(user.file) if user.file else None
    for entry in listed:
        if not isinstance(entry, str) or not entry:
            continue
        trusted = canonical_dir(entry, base)
        if root == trusted or root.startswith(trusted.rstrip(os.sep) + os.sep):
            return True
    return False


def _get(data: Any, path: Sequence[Any]) -> Any:
    node = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _sub(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The schema of ``key`` inside an object schema (its property, else additionalProperties)."""
    if not isinstance(schema, Mapping):
        return None
    props = schema.get("properties")
    if isinstance(props, Mapping) and key in props:
        found = props[key]
        return found if isinstance(found, Mapping) else None
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _is_map(schema: Mapping[str, Any] | None, key: str) -> bool:
    """Whether ``key`` is an entry of a free-form map (not a declared property)."""
    if not isinstance(schema, Mapping):
        return False
    props = schema.get("properties")
    return not (isinstance(props, Mapping) and key in props) and isinstance(
        schema.get("additionalProperties"), Mapping
    )


def policy_of(schema: Mapping[str, Any] | None) -> Any:
    """The ``x-workspace`` policy that applies to a value of ``schema``: what it declares
    (an unknown name counts as ``"user"``), else ``"keys"`` for a table (its keys decide),
    else ``"user"``: secure by default."""
    if not isinstance(schema, Mapping):
        return USER
    declared = schema.get(POLICY)
    if declared is None:
        props = schema.get("properties")
        return _KEYS if isinstance(props, Mapping) and props else USER
    if isinstance(declared, list) or declared in POLICIES:
        return declared
    return USER


def _dotted(path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in path)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class LayeredSource:
    """The config a host booted with: its layers, lowest first, seen as one.

    ``data`` is the merged config (each table merged by its schema's policies,
    looked up with ``schema_for`` as plugins claim tables). Errors, lines and
    files are those of the layer that set a key. ``notes`` collects the boot
    warnings about what an untrusted workspace config could not change.
    """

    def __init__(
        self,
        layers: Sequence[ConfigSource],
        schema_for: SchemaFor | None = None,
        *,
        workspace_trusted: bool | None = None,
        user_file: str | None = None,
    ) -> None:
        self.layers: tuple[ConfigSource, ...] = tuple(layers)
        self.schema_for: SchemaFor = schema_for or (lambda table: None)
        #: ``None`` when no workspace config was loaded, else whether the user config trusts it
        self.workspace_trusted = workspace_trusted
        #: the user config file (whether or not it exists), for messages
        self.user_file = user_file
        self.notes: list[str] = []
        self._noted: set[tuple[str, ...]] = set()
        self._cache: dict[str, tuple[int, dict[str, Any]]] = {}

    # --- what plugins read (the same surface as a single `ConfigSource`) ------------

    @property
    def data(self) -> Mapping[str, Any]:
        return _MergedView(self)

    @property
    def file(self) -> str | None:
        """The file of the topmost layer that came from one (for messages)."""
        return next((layer.file for layer in reversed(self.layers) if layer.file), None)

    @property
    def text(self) -> str | None:
        return next((layer.text for layer in reversed(self.layers) if layer.file), None)

    @property
    def files(self) -> tuple[str, ...]:
        """Every config file this host loaded (not ``<config>`` mappings)."""
        return tuple(
            layer.file for layer in self.layers if layer.file and not layer.file.startswith("<")
        )

    def layer_of(self, path: Sequence[Any]) -> ConfigSource | None:
        """The topmost layer that sets ``path`` (a table, then keys)."""
        for layer in reversed(self.layers):
            if _get(layer.data, path) is not _MISSING:
                return layer
        return None

    def origin(self, path: Sequence[Any]) -> ConfigSource | None:
        """The layer the merged value at ``path`` came from: the topmost that sets it to
        that value, a workspace config that is not trusted only when no other layer does (a
        value it set and the layering ignored never decides, say, what a relative path in
        the user's value is relative to). Else the topmost that sets ``path``."""
        merged = _get(self.data, path)
        if merged is not _MISSING:
            same = [layer for layer in reversed(self.layers) if _get(layer.data, path) == merged]
            sure = [layer for layer in same if layer.kind != WORKSPACE or self.workspace_trusted]
            if sure or same:
                return (sure or same)[0]
        return self.layer_of(path)

    def _at(self, path: Sequence[Any]) -> ConfigSource | None:
        return self.layer_of(path) or (self.layers[-1] if self.layers else None)

    def line_of(self, path: tuple[Any, ...]) -> int | None:
        layer = self._at(path)
        return layer.line_of(path) if layer is not None else None

    def line_of_value(self, path: tuple[Any, ...], value: str) -> int | None:
        layer = self._layer_with_value(path, value)
        return layer.line_of_value(path, value) if layer is not None else None

    def locate(
        self, path: tuple[Any, ...], value: str | None = None
    ) -> tuple[str | None, int | None]:
        """``(file, line)`` of the layer that set ``path`` (or the list item ``value``)."""
        layer = self._layer_with_value(path, value) if value is not None else self._at(path)
        if layer is None:
            return None, None
        line = layer.line_of_value(path, value) if value is not None else layer.line_of(path)
        return layer.file, line

    def error(self, message: str, path: tuple[Any, ...]) -> ConfigError:
        layer = self._at(path)
        if layer is None:
            from .._model.errors import ConfigError

            return ConfigError(message, key=_dotted(path) or None)
        return layer.error(message, path)

    def _layer_with_value(self, path: Sequence[Any], value: Any) -> ConfigSource | None:
        for layer in reversed(self.layers):
            found = _get(layer.data, path)
            if isinstance(found, list) and value in found:
                return layer
        return self._at(path)

    # --- provenance ------------------------------------------------------------------

    def trusts(self, directory: str | os.PathLike[str]) -> bool:
        """Whether the user config's ``[trust] workspaces`` covers ``directory``: a
        ``callgate.toml`` there would apply in full."""
        user = next((layer for layer in self.layers if layer.kind == USER), None)
        return is_trusted(user, directory)

    def from_untrusted_workspace(self, path: Sequence[Any]) -> bool:
        """True when the value at ``path`` exists only because a workspace config that is
        not trusted added it (an MCP server it defines, say): no trusted layer sets it."""
        found = False
        for layer in self.layers:
            if _get(layer.data, path) is _MISSING:
                continue
            if layer.kind == WORKSPACE and not self.workspace_trusted:
                found = True
            else:
                return False
        return found

    # --- merging ---------------------------------------------------------------------

    def table(self, name: str, schema: Mapping[str, Any] | None = None) -> Any:
        """The merged raw table ``name`` (``{}`` when no layer sets it; not validated).

        ``schema`` defaults to the one registered for the table.
        """
        schema = schema if schema is not None else self.schema_for(name)
        key = id(schema) if schema is not None else 0
        cached = self._cache.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        value: Any = _MISSING
        for layer in self.layers:
            upper = layer.data.get(name, _MISSING) if isinstance(layer.data, Mapping) else _MISSING
            if upper is _MISSING:
                continue
            if value is _MISSING and layer.kind != WORKSPACE:
                value = copy.deepcopy(upper)
                continue
            lower = {} if value is _MISSING else value
            trusted = layer.kind != WORKSPACE or bool(self.workspace_trusted)
            value = self._merge(lower, upper, schema, (name,), layer, trusted)
        if value is _MISSING:
            value = {}
        if schema is not None:
            self._cache[name] = (key, value)
        return value

    def _merge(
        self,
        lower: Any,
        upper: Any,
        schema: Mapping[str, Any] | None,
        path: tuple[Any, ...],
        layer: ConfigSource,
        trusted: bool,
    ) -> Any:
        policy = policy_of(schema)
        concat = isinstance(schema, Mapping) and (schema.get(LAYERS) == "concat" or policy == "add")
        if lower is _MISSING and isinstance(schema, Mapping) and "default" in schema:
            lower = copy.deepcopy(schema["default"])
        if isinstance(upper, list) and concat and (trusted or policy == "add"):
            base = lower if isinstance(lower, list) else []
            return base + [x for x in upper if x not in base]
        if trusted:
            if isinstance(upper, Mapping) and isinstance(lower, Mapping):
                return self._merge_table(
                    lower, upper, schema, path, layer, trusted, new_entries=True
                )
            return copy.deepcopy(upper)
        # a workspace config that is not trusted: only what its owner declared, tightening
        if (
            isinstance(upper, Mapping)
            and policy in (_KEYS, "add", "any")
            and (lower is _MISSING or isinstance(lower, Mapping))
        ):
            base = lower if isinstance(lower, Mapping) else {}
            return self._merge_table(
                base, upper, schema, path, layer, trusted, new_entries=policy != _KEYS
            )
        if policy == "any" and not isinstance(upper, Mapping):
            return copy.deepcopy(upper)
        if policy == "subset" and isinstance(upper, list):
            base = lower if isinstance(lower, list) else []
            kept = [x for x in upper if x in base]
            dropped = [x for x in upper if x not in base]
            if dropped:
                self._note(
                    layer,
                    path,
                    "it may only narrow the user's list (not added: "
                    f"{', '.join(_show(x) for x in dropped)})",
                )
            return kept
        if policy in ("min", "max") and _number(upper):
            if not _number(lower):
                return upper
            pick = min if policy == "min" else max
            if pick(lower, upper) != upper:
                self._note(
                    layer,
                    path,
                    f"it may only {'lower' if policy == 'min' else 'raise'} {_show(lower)}",
                )
                return lower
            return upper
        if isinstance(policy, list):
            rank = _rank(policy, upper)
            if rank is None:
                return lower
            if lower is _MISSING or (_rank(policy, lower) or 0) <= rank:
                return upper
            self._note(layer, path, f"{_show(upper)} is looser than {_show(lower)}")
            return lower
        # "user", an undeclared key (secure by default), or a value its policy cannot take
        self._refuse(layer, path, upper, lower)
        return lower

    def _merge_table(
        self,
        lower: Mapping[str, Any],
        upper: Mapping[str, Any],
        schema: Mapping[str, Any] | None,
        path: tuple[Any, ...],
        layer: ConfigSource,
        trusted: bool,
        *,
        new_entries: bool,
    ) -> dict[str, Any]:
        """``upper`` merged over ``lower`` key by key. A new entry of a map is taken whole
        when ``new_entries`` (a trusted layer, or a map whose policy is ``"add"``); else
        its own schema decides, and an entry left with nothing is not added."""
        out = dict(lower)
        for key, value in upper.items():
            sub = _sub(schema, key)
            if key not in lower and _is_map(schema, key):
                if new_entries:
                    out[key] = copy.deepcopy(value)  # a new entry of a map: taken whole
                    continue
                merged = self._merge(_MISSING, value, sub, (*path, key), layer, trusted)
                if merged is not _MISSING and not (
                    isinstance(merged, Mapping) and not merged and value
                ):
                    out[key] = merged
                continue
            merged = self._merge(lower.get(key, _MISSING), value, sub, (*path, key), layer, trusted)
            if merged is _MISSING:
                out.pop(key, None)
            else:
                out[key] = merged
        return out

    def _refuse(self, layer: ConfigSource, path: tuple[Any, ...], upper: Any, lower: Any) -> None:
        """Note each value of ``upper`` a user-only key kept from changing (a table's keys
        one by one, so each warning names the line that set it)."""
        if lower is not _MISSING and upper == lower:
            return
        if isinstance(upper, Mapping) and upper:
            base = lower if isinstance(lower, Mapping) else {}
            for key, value in upper.items():
                self._refuse(layer, (*path, key), value, base.get(key, _MISSING))
            return
        self._note(layer, path, "only the user config sets it")

    def _note(self, layer: ConfigSource, path: tuple[Any, ...], why: str) -> None:
        if path in self._noted or path[:1] == (TRUST_TABLE,):  # [trust] warns on its own
            return
        self._noted.add(path)
        line = layer.line_of(path)
        where = (
            f"{layer.file}:{line}: "
            if layer.file and line
            else (f"{layer.file}: " if layer.file else "")
        )
        trust = (
            f" (to apply it, list the workspace in [trust] workspaces of {self.user_file})"
            if self.user_file
            else ""
        )
        self.notes.append(
            f"{where}{_dotted(path)} in the workspace config is ignored: {why}; "
            "a workspace config that is not trusted can only tighten the user "
            f"config{trust}"
        )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rank(scale: list[Any], value: Any) -> int | None:
    for index, item in enumerate(scale):
        if item == value and type(item) is type(value):
            return index
    return None


class _MergedView(Mapping[str, Any]):
    """``source.data`` of a `LayeredSource`: each table merged on first read."""

    def __init__(self, source: LayeredSource) -> None:
        self._source = source

    def _names(self) -> list[str]:
        names: dict[str, None] = {}
        for layer in self._source.layers:
            if isinstance(layer.data, Mapping):
                names.update(dict.fromkeys(layer.data))
        return list(names)

    def __getitem__(self, name: str) -> Any:
        if name not in self._names():
            raise KeyError(name)
        for layer in reversed(self._source.layers):
            value = layer.data.get(name, _MISSING)
            if value is not _MISSING and not isinstance(value, Mapping):
                return value  # not a table: validation reports it
        return self._source.table(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


__all__ = [
    "EXPLICIT",
    "KIND",
    "KIND_POLICIES",
    "LAYERS",
    "POLICIES",
    "POLICY",
    "USER",
    "USER_CONFIG_ENV",
    "WORKSPACE",
    "LayeredSource",
    "is_trusted",
    "policy_of",
    "user_config_dir",
    "user_config_path",
]
