"""The pipeline's hook calls: typed, through pluggy, with each answer labelled by its plugin.

Every call goes through ``pm.hook`` (pluggy's own calling), so ``wrapper=True``
and ``hookwrapper=True`` implementations, ``tryfirst``/``trylast`` and
``pm.add_hookcall_monitoring`` all work as pluggy documents them. Two things
are added, and only these:

- A hook that no plugin implements is not called: its answer would be empty,
  and skipping it keeps a call through the pipeline within microseconds.
  Monitoring therefore sees every hook that has an implementation.
- The core names the plugin that refused a call or decided a permission
  (signature ``hook:<plugin>``). pluggy returns answers without saying whose
  they are, so the host labels them where they are made: each ordinary
  implementation of ``callgate_pre_tool_use`` and ``callgate_check_permission``
  is wrapped once, when first seen, so that a `Refuse`, `Replace` or `Decision`
  it returns without a ``source`` carries its plugin's name. Wrappers (which see
  the labelled answers) are left as they are.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from ._model import Decision, Refuse, Replace, ToolCall, ToolResult, Violation

if TYPE_CHECKING:
    from ._session import Session
    from ._spec import ToolSpec
    from .process import Confined, Launch

#: The hooks whose answers the host labels with the answering plugin's name.
LABELLED = ("callgate_pre_tool_use", "callgate_check_permission")
_LABEL = "__callgate_plugin__"


def _labelled(function: Callable[..., Any], plugin: str) -> Callable[..., Any]:
    """``function`` returning its answer with ``source=plugin`` when the answer has none."""

    @functools.wraps(function)
    def answer(*args: Any, **kwargs: Any) -> Any:
        found = function(*args, **kwargs)
        if inspect.isawaitable(found):  # a pre-tool-use answer that runs something first
            return _Later(found, plugin)
        return _with_source(found, plugin)

    setattr(answer, _LABEL, plugin)
    return answer


def _with_source(found: Any, plugin: str) -> Any:
    if isinstance(found, Refuse | Replace | Decision) and found.source is None:
        return attrs.evolve(found, source=plugin)
    return found


class _Later:
    """An awaitable answer, labelled once it is awaited; `close` closes the answer itself
    (an answer the pipeline no longer needs is never left unawaited)."""

    def __init__(self, pending: Any, plugin: str) -> None:
        self._pending = pending
        self._plugin = plugin

    def __await__(self) -> Any:
        found = yield from self._pending.__await__()
        return _with_source(found, self._plugin)

    def close(self) -> None:
        close = getattr(self._pending, "close", None)
        if close is not None:
            close()


def label(impls: Iterable[pluggy.HookImpl]) -> None:
    """Label the answers of every ordinary implementation not labelled yet.

    ``HookImpl.function`` is replaced by a function with the same parameters that
    calls the original: pluggy still calls it in its own order, with its own
    arguments, and reports it under the same plugin.
    """
    for impl in impls:
        if impl.wrapper or impl.hookwrapper or hasattr(impl.function, _LABEL):
            continue
        impl.function = _labelled(impl.function, impl.plugin_name)  # type: ignore[misc]


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager, counting changes to its plugins and specs, so the pipeline
    knows when to look at a hook's implementations again (and otherwise need not)."""

    generation = 0

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            return super().register(plugin, name)
        finally:
            self.generation += 1

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        try:
            return super().unregister(plugin, name)
        finally:
            self.generation += 1

    def add_hookspecs(self, module_or_class: object) -> None:
        try:
            super().add_hookspecs(module_or_class)
        finally:
            self.generation += 1


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
        impls = caller.get_hookimpls()
        if name in LABELLED:
            label(impls)
        found = self._callers[name] = caller if impls else None
        return found

    def implemented(self, name: str) -> bool:
        return self._caller(name) is not None

    def validate_arguments(self, call: ToolCall, tool: ToolSpec,
                           session: Session) -> list[Violation]:
        caller = self._caller("callgate_validate_arguments")
        if caller is None:
            return []
        answers = caller(call=call, tool=tool, session=session)
        return [v for found in answers for v in found]

    def pre_tool_use(self, call: ToolCall, tool: ToolSpec,
                     session: Session) -> list[Any]:
        """Every answer: a `Refuse`, a `Replace`, or an awaitable of one (or of nothing)."""
        caller = self._caller("callgate_pre_tool_use")
        if caller is None:
            return []
        return [a for a in caller(call=call, tool=tool, session=session)
                if isinstance(a, Refuse | Replace) or inspect.isawaitable(a)]

    def check_permission(self, call: ToolCall, tool: ToolSpec,
                         session: Session) -> list[Decision]:
        caller = self._caller("callgate_check_permission")
        if caller is None:
            return []
        return [d for d in caller(call=call, tool=tool, session=session)
                if isinstance(d, Decision)]

    def ask_permission(self, call: ToolCall, tool: ToolSpec, session: Session,
                       preview: Any) -> Any:
        """The approver's answer (a `Decision`, a bool or an awaitable of one), or ``None``."""
        caller = self._caller("callgate_ask_permission")
        if caller is None:
            return None
        return caller(call=call, tool=tool, session=session, preview=preview)

    def shape_result(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                     session: Session) -> ToolResult:
        """The result after the shaping hooks: the last replacement in call order, if any."""
        caller = self._caller("callgate_shape_result")
        if caller is None:
            return result
        for answer in caller(call=call, tool=tool, result=result, session=session):
            if isinstance(answer, ToolResult):
                result = answer
        return result

    def post_tool_use(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                      session: Session) -> list[Any]:
        """Every answer of ``callgate_post_tool_use``: a `ToolResult` or an awaitable of one."""
        caller = self._caller("callgate_post_tool_use")
        if caller is None:
            return []
        return [a for a in caller(call=call, tool=tool, result=result, session=session)
                if isinstance(a, ToolResult) or inspect.isawaitable(a)]

    def confine_process(self, launch: Launch, session: Session) -> Confined | None:
        """The sandbox's wrapping of ``launch`` (`callgate.process`), or ``None``: no plugin
        confines programs, or the session runs them unconfined."""
        caller = self._caller("callgate_confine_process")
        if caller is None:
            return None
        return caller(launch=launch, session=session)  # type: ignore[no-any-return]

    def session_start(self, session: Session) -> None:
        self._pm.hook.callgate_session_start(session=session)

    def session_end(self, session: Session) -> None:
        self._pm.hook.callgate_session_end(session=session)

    def turn_start(self, session: Session, origin: str) -> None:
        self._pm.hook.callgate_turn_start(session=session, origin=origin)


__all__ = ["LABELLED", "PipelineHooks", "label"]
