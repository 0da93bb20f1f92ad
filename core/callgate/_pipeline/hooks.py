"""The pipeline's hook calls: typed, through pluggy, with each answer labelled by its plugin.

Every call goes through ``pm.hook`` (pluggy's own calling), so ``wrapper=True``
and ``hookwrapper=True`` implementations, ``tryfirst``/``trylast`` and
``pm.add_hookcall_monitoring`` all work as pluggy documents them. Two things
are added, and only these:

- A hook that no plugin implements is not called: its answer would be empty,
  and skipping it keeps a call through the pipeline within microseconds.
  Monitoring therefore sees every hook that has an implementation.
- The core knows which plugin answered (`ATTRIBUTED`): the plugin whose
  ``callgate_register_tools`` runs (the registry records its tools under it, a failure
  names it), and the plugin that refused a call or decided a permission (signature
  ``hook:<plugin>``). pluggy returns answers without saying whose they are, so the
  plugin manager registers each plugin's ordinary implementations of these hooks
  through a companion plugin (`Attributed`) whose functions call the plugin's and
  label what they return, with the same options (``tryfirst``...), in the same place of
  pluggy's order. pluggy's own objects are never changed; wrappers are left as they
  are (they see the labelled answers).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from .._model.errors import BootError
from .._model.values import Decision, Refuse, Replace, ToolCall, ToolResult, Violation

if TYPE_CHECKING:
    from .._model.spec import ToolSpec
    from .launch import Confined, Launch

REGISTER = "callgate_register_tools"
#: The hooks whose ordinary implementations run through their plugin's companion.
ATTRIBUTED = (REGISTER, "callgate_pre_tool_use", "callgate_check_permission")
#: what a companion's registration name adds to its plugin's
COMPANION = " (answers)"


def _labelled(function: Callable[..., Any], plugin: str) -> Callable[..., Any]:
    """``function`` returning its answer with ``source=plugin`` when the answer has none
    (pluggy reads the parameters of the function it wraps)."""

    @functools.wraps(function)
    def answer(*args: Any, **kwargs: Any) -> Any:
        found = function(*args, **kwargs)
        if inspect.isawaitable(found):  # a pre-tool-use answer that runs something first
            return _Later(found, plugin)
        return _with_source(found, plugin)

    return answer


def _with_source(found: Any, plugin: str) -> Any:
    if isinstance(found, Refuse | Replace | Decision) and found.source is None:
        return attrs.evolve(found, source=plugin)
    return found


class _Later:
    """An awaitable answer, labelled once it is awaited; `close` closes the answer itself
    (an answer the pipeline no longer needs is never left unawaited)."""

    def __init__(self, pending: Awaitable[Any], plugin: str) -> None:
        self._pending = pending
        self._plugin = plugin

    def __await__(self) -> Generator[Any, None, Any]:
        found = yield from self._pending.__await__()
        return _with_source(found, self._plugin)

    def close(self) -> None:
        close = getattr(self._pending, "close", None)
        if close is not None:
            close()


def _registering(function: Callable[..., Any], plugin: str) -> Callable[..., Any]:
    """``function`` (a ``callgate_register_tools``) run with the registry knowing that
    ``plugin`` registers, its failures failing boot with the plugin's name. It takes both
    of the hook's arguments and hands ``function`` those it declares."""
    wanted = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]

    def register(registry: Any, host: Any) -> Any:
        given = {"registry": registry, "host": host}
        registry.current_plugin = plugin
        try:
            return function(**{name: given[name] for name in wanted if name in given})
        except BootError:
            raise
        except Exception as exc:
            raise BootError(
                f"plugin {plugin} failed while registering its tools: {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            registry.current_plugin = None

    return register


class Attributed:
    """One plugin's ordinary implementations of the `ATTRIBUTED` hooks, registered beside
    it (named ``<plugin> (answers)``) with the options the plugin gave them."""

    def __init__(
        self, plugin: str, found: dict[str, tuple[Callable[..., Any], pluggy.HookimplOpts]]
    ) -> None:
        self.plugin = plugin
        self.options: dict[str, pluggy.HookimplOpts] = {}
        for attribute, (function, options) in found.items():
            hook = options.get("specname") or attribute
            wrapped = (
                _registering(function, plugin) if hook == REGISTER else _labelled(function, plugin)
            )
            setattr(self, attribute, wrapped)  # an instance's plain function: pluggy calls it
            self.options[attribute] = options

    def __dir__(self) -> list[str]:
        """Only the implementations: pluggy looks at each name ``dir`` gives."""
        return list(self.options)


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager, registering each plugin's `ATTRIBUTED` implementations
    through its companion, and counting changes to its plugins and specs, so the pipeline
    knows when to look at a hook's implementations again (and otherwise need not)."""

    generation = 0

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._found: dict[str, pluggy.HookimplOpts] | None = None
        self._companions: dict[str, str] = {}

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if type(plugin) is Attributed:
            return plugin.options.get(name)
        options = super().parse_hookimpl_opts(plugin, name)
        if (
            options is None
            or self._found is None
            or options.get("wrapper")
            or options.get("hookwrapper")
            or (options.get("specname") or name) not in ATTRIBUTED
        ):
            return options
        self._found[name] = options  # the companion registers it
        return None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            if isinstance(plugin, Attributed):
                return super().register(plugin, name)
            self._found = {}
            try:
                registered = super().register(plugin, name)
                found = self._found
            finally:
                self._found = None
            if registered is not None and found:
                companion = Attributed(
                    registered,
                    {
                        attribute: (getattr(plugin, attribute), options)
                        for attribute, options in found.items()
                    },
                )
                try:
                    super().register(companion, registered + COMPANION)
                except BaseException:
                    super().unregister(plugin, registered)
                    raise
                self._companions[registered] = registered + COMPANION
            return registered
        finally:
            self.generation += 1

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        try:
            if name is None and plugin is not None:
                name = self.get_name(plugin)
            removed = super().unregister(plugin, name)
            companion = self._companions.pop(name, None) if name is not None else None
            if companion is not None and self.has_plugin(companion):
                super().unregister(name=companion)
            return removed
        finally:
            self.generation += 1

    def add_hookspecs(self, module_or_class: ModuleType | type) -> None:
        try:
            super().add_hookspecs(module_or_class)
        finally:
            self.generation += 1

    def named_plugins(self) -> list[tuple[str, object]]:
        """``(name, plugin)`` of every plugin registered, companions left out."""
        return [(n, p) for n, p in self.list_name_plugin() if not isinstance(p, Attributed)]


class PipelineHooks:
    """Typed calls of the hooks one tool call goes through (a facade over ``pm.hook``)."""

    def __init__(self, pm: PluginManager) -> None:
        self._pm = pm
        self._generation = -1
        self._callers: dict[str, Any] = {}

    def _caller(self, name: str) -> Any:
        """The hook's caller, or ``None`` when no plugin implements it."""
        if self._generation != self._pm.generation:  # a plugin came or went: look again
            self._callers.clear()
            self._generation = self._pm.generation
        try:
            return self._callers[name]
        except KeyError:
            pass
        caller = getattr(self._pm.hook, name)
        found = self._callers[name] = caller if caller.get_hookimpls() else None
        return found

    def implemented(self, name: str) -> bool:
        return self._caller(name) is not None

    @property
    def generation(self) -> int:
        """Moves whenever a plugin comes or goes (what depends on the hooks asks again)."""
        return self._pm.generation

    def validate_arguments(self, call: ToolCall, tool: ToolSpec, session: Any) -> list[Violation]:
        caller = self._caller("callgate_validate_arguments")
        if caller is None:
            return []
        answers = caller(call=call, tool=tool, session=session)
        return [v for found in answers for v in found]

    def pre_tool_use(self, call: ToolCall, tool: ToolSpec, session: Any) -> list[Any]:
        """Every answer: a `Refuse`, a `Replace`, or an awaitable of one (or of nothing)."""
        caller = self._caller("callgate_pre_tool_use")
        if caller is None:
            return []
        return [
            a
            for a in caller(call=call, tool=tool, session=session)
            if isinstance(a, Refuse | Replace) or inspect.isawaitable(a)
        ]

    def check_permission(self, call: ToolCall, tool: ToolSpec, session: Any) -> list[Decision]:
        caller = self._caller("callgate_check_permission")
        if caller is None:
            return []
        return [d for d in caller(call=call, tool=tool, session=session) if isinstance(d, Decision)]

    def ask_permission(self, call: ToolCall, tool: ToolSpec, session: Any, preview: Any) -> Any:
        """The approver's answer (a `Decision`, a bool or an awaitable of one), or ``None``."""
        caller = self._caller("callgate_ask_permission")
        if caller is None:
            return None
        return caller(call=call, tool=tool, session=session, preview=preview)

    def shape_result(
        self, call: ToolCall, tool: ToolSpec, result: ToolResult, session: Any
    ) -> ToolResult:
        """The result after the shaping hooks: the last replacement in call order, if any."""
        caller = self._caller("callgate_shape_result")
        if caller is None:
            return result
        for answer in caller(call=call, tool=tool, result=result, session=session):
            if isinstance(answer, ToolResult):
                result = answer
        return result

    def results_delivered(self, call_ids: Sequence[str], session: Any) -> None:
        """``callgate_results_delivered``: a batch's results reached the caller."""
        caller = self._caller("callgate_results_delivered")
        if caller is not None:
            caller(call_ids=list(call_ids), session=session)

    def post_tool_use(
        self, call: ToolCall, tool: ToolSpec, result: ToolResult, session: Any
    ) -> list[Any]:
        """Every answer of ``callgate_post_tool_use``: a `ToolResult` or an awaitable of one."""
        caller = self._caller("callgate_post_tool_use")
        if caller is None:
            return []
        return [
            a
            for a in caller(call=call, tool=tool, result=result, session=session)
            if isinstance(a, ToolResult) or inspect.isawaitable(a)
        ]

    def confine_process(self, launch: Launch, session: Any) -> Confined | None:
        """The sandbox's wrapping of ``launch`` (`callgate.process`), or ``None``: no plugin
        confines programs, or the session runs them unconfined."""
        caller = self._caller("callgate_confine_process")
        if caller is None:
            return None
        return caller(launch=launch, session=session)  # type: ignore[no-any-return]

    def session_start(self, session: Any) -> None:
        self._pm.hook.callgate_session_start(session=session)

    def session_end(self, session: Any) -> None:
        self._pm.hook.callgate_session_end(session=session)

    def turn_start(self, session: Any, origin: str) -> None:
        self._pm.hook.callgate_turn_start(session=session, origin=origin)


__all__ = ["ATTRIBUTED", "Attributed", "PipelineHooks", "PluginManager"]
