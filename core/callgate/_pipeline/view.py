"""What hooks and tools see of a session and of its host: `SessionView` and `HostView`.

Every hook receives ``session: SessionView`` and every tool ``ctx.session`` (and
``ctx.host: HostView``). They are protocols: `callgate.host.Session` and `callgate.Host`
are what implements them, but nothing below the session and host layers imports those
(the pipeline runs on a `SessionState`, the gate and the file API on a `FileScope`).
Plugins type against these; integrators hold the concrete classes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import pluggy

    from .._config.layers import LayeredSource
    from .._files.access import FileAccess
    from .._files.changes import FileChanges
    from .._files.policy import FilesPolicy
    from .._fs.observations import ObservationLedger
    from .._fs.workspace import Workspace
    from .._model.facts import ExecutionFact
    from .._model.keys import SessionKey
    from .._model.spec import ProxyRoute, ToolSpec
    from .._model.values import Decision, ToolCall, ToolResult
    from .._permissions.rules import RuleEngine
    from .._registry.registry import Registry
    from .._results.notices import NoticeQueue
    from .._results.results import ResultStore
    from .._store.journal import SessionStorage
    from .._validation.compiled import Compiled
    from .childprofile import ChildProfile
    from .hooks import PipelineHooks
    from .progress import ProgressSink
    from .shared import SharedResources

T = TypeVar("T")


class HostView(Protocol):
    """A booted host, as sessions, tools and hooks use it (`callgate.Host` implements it)."""

    @property
    def os(self) -> str:
        """``"posix"`` or ``"windows"``: the OS the surface is for."""
        ...

    @property
    def registry(self) -> Registry: ...

    @property
    def pm(self) -> pluggy.PluginManager:
        """pluggy's plugin manager (a plugin's own hooks: ``host.pm.hook.<name>``)."""
        ...

    @property
    def hooks(self) -> PipelineHooks: ...

    @property
    def permissions(self) -> RuleEngine:
        """The ``[permissions]`` rule engine."""
        ...

    @property
    def files_policy(self) -> FilesPolicy:
        """The core's ``[files]`` table, compiled."""
        ...

    @property
    def config_source(self) -> LayeredSource: ...

    @property
    def workspace(self) -> str | None:
        """The workspace this host booted for (whose config it looked for), if one was given."""
        ...

    @property
    def surface_mode(self) -> str: ...

    @property
    def warnings(self) -> list[str]: ...

    def config(self, table: str) -> dict[str, Any]: ...

    def plugin_config(self, plugin: str | None) -> dict[str, Any]: ...

    def plugin_config_value(self, table: str, key: str, default: Any) -> Any: ...

    def from_untrusted_workspace(self, *key: str) -> bool: ...

    def config_file(self, *key: str) -> str | None: ...

    def visible_names(self, *, assume_hooks: bool = False) -> list[str]: ...

    def unhooked(self) -> dict[str, tuple[str, ...]]:
        """``{tool: hooks it needs that no loaded plugin implements}``: the registered tools
        left out of every session for that reason."""
        ...

    def session_tools(self) -> list[ToolSpec]: ...

    def routes(self) -> list[ToolSpec]: ...

    def compiled(self, spec: ToolSpec) -> Compiled: ...

    def certainly_valid(self, spec: ToolSpec) -> Callable[[Any], bool] | None: ...

    def record_fact(self, fact: ExecutionFact) -> None:
        """Keep one writer's or destructive call's execution fact (the pipeline's)."""
        ...

    def execution_facts(self) -> list[ExecutionFact]: ...

    def worker_boot(self) -> dict[str, Any]:
        """How a worker of this host's sessions boots (its ``initialize`` parameters)."""
        ...

    @property
    def store_location(self) -> str: ...

    def session_store(self) -> tuple[Any, Any]: ...

    @property
    def store(self) -> Any: ...

    def open_session(
        self,
        workspace: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        origin: str | None = None,
        *,
        resume: str | None = None,
        name: str | None = None,
        principal: str | None = None,
    ) -> SessionView: ...


class SessionView(Protocol):
    """One session, as hooks and tools see it (`callgate.host.Session` implements it)."""

    @property
    def id(self) -> str: ...

    @property
    def principal(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def host(self) -> HostView: ...

    @property
    def parent(self) -> SessionView | None: ...

    @property
    def depth(self) -> int: ...

    @property
    def profile(self) -> ChildProfile | None: ...

    @property
    def profiles(self) -> tuple[ChildProfile, ...]: ...

    @property
    def shared(self) -> SharedResources: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def directory(self) -> str | None: ...

    @property
    def turn_origin(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def resumed(self) -> bool: ...

    @property
    def ledger(self) -> ObservationLedger: ...

    @property
    def files(self) -> FileAccess: ...

    @property
    def max_chars(self) -> int: ...

    @property
    def results(self) -> ResultStore: ...

    @property
    def storage(self) -> SessionStorage: ...

    @property
    def notices(self) -> NoticeQueue: ...

    @property
    def file_changes(self) -> FileChanges:
        """Files that changed on disk (`callgate.files.FileChanges`)."""
        ...

    @property
    def route(self) -> ProxyRoute | None: ...

    @property
    def store(self) -> Any: ...

    @property
    def closed(self) -> bool: ...

    @property
    def cancelling(self) -> bool: ...

    @property
    def max_depth(self) -> int: ...

    @property
    def can_open_child(self) -> bool: ...

    def extension(self, key: SessionKey[T]) -> T:
        """The session's object for ``key``, made on first use by the factory a plugin
        registered (`Registry.add_session_extension`); `LookupError` when none did."""
        ...

    def find_extension(self, key: SessionKey[T]) -> T | None:
        """`extension`, or ``None`` when no loaded plugin adds ``key``."""
        ...

    def counters(self) -> dict[str, int]: ...

    def count(self, name: str, n: int = 1) -> None: ...

    def observations(self) -> dict[str, Any]: ...

    def tool_names(self) -> list[str]: ...

    def available_tools(self) -> dict[str, ToolSpec]: ...

    def tool(self, name: str) -> ToolSpec | None: ...

    def is_visible(self, name: str) -> bool: ...

    def shown_hidden(self) -> frozenset[str]: ...

    def surface_specs(self) -> list[ToolSpec]: ...

    def why_absent(self, name: str) -> ToolResult | None:
        """Why a tool the host registers is not in this session, as a call of it is
        answered (a profile's ``blocked`` refusal or ``unavailable`` saying why); ``None``
        when the host registers no such tool."""
        ...

    def record_message(self, role: str, text: str) -> None: ...

    def flush(self) -> None: ...

    def scratch_dir(self) -> str: ...

    def begin_turn(self, origin: str = "human") -> None: ...

    def set_mode(self, mode: str) -> None: ...

    def tighten_fallback(self, mode: str, because: str) -> None:
        """Make the permission fallback at least as strict as ``mode`` (never looser)."""
        ...

    def fallback_for(self, mode: str) -> tuple[str, str | None]: ...

    def cancel(self) -> None: ...

    def open_child(
        self,
        workspace: str | os.PathLike[str] | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        profile: ChildProfile | None = None,
    ) -> SessionView: ...

    async def close(self) -> None: ...

    async def run(self, call: ToolCall) -> ToolResult: ...

    async def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]: ...

    def progress_to(self, sink: ProgressSink | None) -> AbstractContextManager[None]: ...

    def yield_turn(self) -> AbstractAsyncContextManager[None]: ...

    def check_arguments(
        self, spec: ToolSpec, raw: Any, *, inside_capability: bool = False, call_id: str = ""
    ) -> tuple[dict[str, Any] | None, ToolResult | None]: ...

    def permission_decision(self, call: ToolCall, spec: ToolSpec) -> Decision | None: ...


__all__ = ["HostView", "SessionView"]
