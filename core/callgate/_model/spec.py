"""`ToolSpec`: everything the host needs to know about one tool, and proxy `Target`s."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import attrs

from .native import NativeFace, as_frozenset, as_tuple
from .values import PathRole, PermissionSubject, Violation

NAME_RULE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")
VISIBILITIES = ("surface", "hidden", "alias")
PLATFORMS = frozenset({"posix", "windows"})


def _roles(value: Iterable[str | PathRole]) -> tuple[PathRole, ...]:
    return tuple(v if isinstance(v, PathRole) else PathRole(v) for v in value)


@attrs.frozen(kw_only=True)
class ProxyRoute:
    """How a proxy tool reaches what is not on the surface, for the host's advice.

    A proxy (``use_capability``) declares it on its `ToolSpec` so the host can word its
    answers without naming the proxy itself:

    - ``hidden_tool``: how the model names hidden tool ``{name}`` through the proxy
      (``use_capability with capability_id "tool:{name}"``), in the ``unavailable``
      answer to a direct call and in "did you mean" suggestions;
    - ``arguments``: where a target's arguments sit in the proxy's call (the
      ``invalid_arguments`` feedback for a target);
    - ``result_page(call_id, result_ref, offset)``: how to read the rest of a
      truncated result (the truncation marker), or ``None`` when the proxy cannot.

    A host boots on the lean surface only when a registered tool has a route (else
    every hidden tool would be unreachable), and that tool cannot be hidden.
    """

    hidden_tool: str
    arguments: str
    result_page: Callable[[str, str, int], str] | None = None


@attrs.frozen(kw_only=True)
class ToolSpec:
    r"""A tool as registered: its contract (name, description, schema, flags) and its code.

    - ``execute(ctx, args)`` may be sync or ``async``; it returns a `ToolResult` or a
      ``str`` (a successful text result), or raises `ToolError`. A sync ``execute``
      runs in a worker thread and an async one under the cancel guard (a cancelled call
      that does not stop in time is abandoned), unless ``blocking`` is false: a tool that
      never blocks (no I/O, no waiting, microseconds of work) then runs inline on the
      event loop, with nothing to walk away from.
    - ``read_only`` may be a callable of the arguments (a proxy is judged by
      its target); its contract flag is then ``False``.
    - ``mutates_paths`` names the path arguments of a structured mutation:
      the host applies confinement, the writer lease and the observation
      gate to them before ``execute`` runs.
    - ``mutated_paths(arguments)`` is for a mutation whose paths sit inside an argument
      (apply_patch's patch): it returns ``(role, path)`` pairs, each ``role.argument`` a
      distinct key of ``ctx.gated`` that names no argument. The gate treats them like
      ``mutates_paths`` (always observed: no rename-onto-itself exemption), and a ``path``
      permission subject judges them besides its arguments. It must not raise: arguments
      it cannot read give ``()`` (the tool's ``validate`` refuses them).
    - ``alias_of`` makes this a compatibility alias: ``alias_args`` maps its
      arguments onto the primary's, or ``execute`` implements it directly.
    - ``available(session)`` is asked once at session open; ``requires_hooks``
      names hooks an integrator must implement for the tool to exist at all (a
      tool whose hook has no implementation is on no surface and in no session).
    - ``validate(ctx, args)`` returns semantic `Violation`s beyond the schema.
    - ``preview(ctx, args)`` returns the change a mutating tool would make.
    - ``resolve_target(ctx, args)`` makes this a proxy: it returns a `Target`
      to run in its place, a `ToolResult` to answer directly, or ``None`` to
      run this tool's own ``execute``; ``route`` says how it reaches hidden tools.
    - ``describe(registered, visible)`` rewrites ``description`` once at boot,
      when every tool is registered and the surface is chosen (both are sets of
      tool names): a description may point to other tools only where they
      exist, and say how a hidden one is reached.
    - ``misplaced(ctx, args)`` is asked only for arguments the schema refused:
      a value-free line saying where the parameters belong when that is not the
      tool's root (a proxy's target parameters sent beside its envelope), or
      ``None`` for the usual line.
    - ``groups`` are the permission groups the tool belongs to (``"Edit"``,
      ``"Bash"``: a rule naming the group names the tool).
    - ``title`` is the name people read (MCP ``title``; default: the name, capitalized,
      underscores as spaces); ``idempotent`` says a repeat of the same call changes nothing
      more (default: read-only tools are); ``open_world`` says the tool reaches outside the
      workspace (the web, other servers). Clients use them as hints only.
    - ``surface_order`` places the tool on the surface: tools with an order
      come first, lowest first; the others follow by name.
    - ``runs_at`` says where the tool runs when the session's tools run on a remote
      executor (docs/executors.md): ``"workspace"`` (the default: next to the files, on
      the worker) or ``"host"`` (with the session's policy and records: a tool that asks
      the user, opens child sessions, reads the session store or judges permissions
      itself). A local session runs every tool in-process either way.
    - ``known_as`` are the names other agents and plain words give the same tool (Claude
      Code's ``Read``, Codex's ``shell``, ``view``): a call of an unknown tool by one of
      them is answered "did you mean <this tool>?" (`callgate.suggest`).
    - ``examples`` are example arguments (each valid against ``schema``) for tools whose
      nested or optional arguments a model gets wrong; renderings that take them send
      them (Anthropic's ``input_examples``).
    - ``native`` holds the `NativeFace`\ s of the tool's family: how a provider-native
      rendering (``anthropic-native``, ``openai-responses-native``, ...) shows it and maps
      the provider's calls onto canonical ones (`callgate_providers`).
    - ``output_schema`` (a JSON Schema whose root is an object) says the tool's result is
      data too: MCP lists it as the tool's ``outputSchema``, and every successful result
      carries that data, valid against it, in ``result.meta["structured_content"]``
      (``callgate serve`` sends it as ``structuredContent``). The text the model reads is
      unchanged; a result the host truncates gets its data clipped the same way.
    """

    name: str
    description: str
    schema: dict[str, Any]
    execute: Callable[..., Any] | None = None
    read_only: bool | Callable[[Any], bool] = False
    destructive: bool | None = None
    mutates_paths: tuple[PathRole, ...] = attrs.field(default=(), converter=_roles)
    mutated_paths: Callable[[Any], Sequence[tuple[PathRole, str]]] | None = None
    exclusive: bool = False
    blocking: bool = True
    visibility: Literal["surface", "hidden", "alias"] = "hidden"
    surface_order: int | None = None
    alias_of: str | None = None
    alias_args: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    platforms: frozenset[str] = attrs.field(default=PLATFORMS, converter=as_frozenset)
    available: Callable[[Any], bool] | None = None
    requires_hooks: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    preview: Callable[..., Any] | None = None
    validate: Callable[[Any, dict[str, Any]], Iterable[Violation]] | None = None
    permission_subject: PermissionSubject | None = None
    groups: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    resolve_target: Callable[..., Any] | None = None
    misplaced: Callable[[Any, dict[str, Any]], str | None] | None = None
    describe: Callable[[frozenset[str], frozenset[str]], str] | None = None
    route: ProxyRoute | None = None
    title: str | None = None
    idempotent: bool | None = None
    open_world: bool = False
    runs_at: Literal["workspace", "host"] = "workspace"
    known_as: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    output_schema: dict[str, Any] | None = None
    plugin: str | None = None
    native: tuple[NativeFace, ...] = attrs.field(default=(), converter=as_tuple)
    examples: tuple[dict[str, Any], ...] = attrs.field(default=(), converter=as_tuple)

    @property
    def mutates(self) -> bool:
        """Whether the host gate runs for this tool (it declares paths it mutates)."""
        return bool(self.mutates_paths) or self.mutated_paths is not None

    @property
    def contract_read_only(self) -> bool:
        """The flag the contract shows: a callable read-only flag reads as ``False``."""
        return self.read_only is True

    def is_read_only(self, arguments: Any) -> bool:
        if callable(self.read_only):
            try:
                return bool(self.read_only(arguments))
            except Exception:
                return False
        return bool(self.read_only)

    @property
    def is_destructive(self) -> bool:
        return (not self.contract_read_only) if self.destructive is None else self.destructive

    @property
    def display_title(self) -> str:
        if self.title:
            return self.title
        words = self.name.replace("__", " ").replace("_", " ").strip()
        return words[:1].upper() + words[1:]

    @property
    def is_idempotent(self) -> bool:
        return self.contract_read_only if self.idempotent is None else self.idempotent

    @property
    def permission_name(self) -> str:
        """Aliases are permission-checked under their primary's name (shell.md §1.6)."""
        return self.alias_of or self.name


@attrs.frozen(kw_only=True)
class Target:
    """What a proxy call (a ``resolve_target`` answer) resolved to.

    The pipeline validates ``arguments`` against ``tool.schema`` (unless
    ``validate`` is false: a deferred target validates itself once it can),
    then runs hooks, permission (under ``permission_name``), gates and
    ``tool.execute`` once, under the outer call's id.
    """

    tool: ToolSpec
    arguments: Any
    label: str
    permission_name: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    fallback: Literal["allow", "ask", "deny"] | None = None
    validate: bool = True

    @property
    def name(self) -> str:
        return self.permission_name or self.tool.permission_name

    def is_read_only(self) -> bool:
        if self.read_only is not None:
            return self.read_only
        return self.tool.is_read_only(self.arguments)

    @property
    def is_destructive(self) -> bool:
        return self.tool.is_destructive if self.destructive is None else self.destructive
