"""`SessionState`: what the pipeline reads and writes of one session, and nothing more.

The pipeline (`_pipeline.pipeline`) runs every call on a `SessionState`, never on the
session itself: the session layer builds one per session (`callgate.host.Session` keeps
it and shows it to integrators, tools and hooks as a `SessionView`). Hooks and tools are
handed ``state.view``.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .worker import DEFAULT_GRACE_S, CancelEvent

if TYPE_CHECKING:
    from .._files.access import FileAccess
    from .._files.changes import FileChanges
    from .._model.spec import ProxyRoute, ToolSpec
    from .._results.notices import NoticeQueue
    from .._results.results import ResultStore
    from .._results.storm import StormBreaker
    from .._store.journal import Journal
    from .childprofile import ChildProfile
    from .view import HostView, SessionView

#: the counters every session starts with (`Counters`)
COUNTERS = (
    "argument_validations",
    "argument_failures",
    "skipped",
    "remote_dispatches",
    "storm_hints",
)
#: how strict each permission fallback is (`SessionState.tighten_fallback`)
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


class Counters:
    """A session's counters (``session.counters()``), safe from any thread.

    ``validated()`` counts one argument validation, the count every call makes, without
    the lock: ``next`` on an `itertools.count` is one step under the GIL, so concurrent
    counts are never lost (``+=`` on a dict entry could lose one), and `snapshot` reads it
    back from the count's repr (``count(N)``)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter({name: 0 for name in COUNTERS})
        self._lock = threading.Lock()
        self._validations = itertools.count()
        self.validated: Callable[[], int] = functools.partial(next, self._validations)

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            counts = dict(self._counts)
        counts["argument_validations"] += int(repr(self._validations)[6:-1])
        return counts


class SessionState:
    """One session as the pipeline runs it.

    - ``view``: what hooks and tools are handed (the session); ``host``: its host.
    - ``tools``/``visible``/``route``: the session's tool table, its surface, and how its
      proxy reaches hidden tools (fixed at open).
    - ``files``: the observed-file API over the session's `FileScope` (the gate's too).
    - ``results``/``max_chars``, ``notices``, ``storm``, ``journal``, ``tracer``,
      ``counters``: where shaping and recording go; ``file_changes``: where dispatch says
      which files a tool changed (``session.file_changes``).
    - ``profiles``/``profile``/``depth``: what a child may run.
    - ``mode``, ``turn_origin``, ``cancel_event``, ``cancel_grace_s``: what the session
      changes between batches (the session's own attributes read and write these);
      ``fallback_floor``: the stricter permission fallback a plugin set
      (`tighten_fallback`).
    - ``stages``: the pipeline's stages for this session, in their fixed order (`stages_for`);
      ``plans``: each tool's stages, worked out on its first call (`_pipeline.plan`).

    A plain class (one per session; no generated code to build at import).
    """

    __slots__ = (
        "cancel_event",
        "cancel_grace_s",
        "counters",
        "depth",
        "fallback_floor",
        "file_changes",
        "files",
        "host",
        "journal",
        "max_chars",
        "mode",
        "notices",
        "plans",
        "plans_generation",
        "profile",
        "profiles",
        "results",
        "route",
        "stages",
        "storm",
        "tools",
        "tracer",
        "turn_origin",
        "view",
        "visible",
    )

    def __init__(
        self,
        *,
        view: SessionView,
        host: HostView,
        tools: dict[str, ToolSpec],
        visible: frozenset[str],
        route: ProxyRoute | None,
        files: FileAccess,
        results: ResultStore,
        max_chars: int,
        notices: NoticeQueue,
        file_changes: FileChanges,
        storm: StormBreaker,
        journal: Journal,
        stages: tuple[Any, ...],
        tracer: Any = None,
        counters: Counters | None = None,
        profiles: tuple[ChildProfile, ...] = (),
        profile: ChildProfile | None = None,
        depth: int = 0,
        mode: str = "default",
        turn_origin: str = "none",
        cancel_event: CancelEvent | None = None,
        cancel_grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self.view = view
        self.host = host
        self.tools = tools
        self.visible = visible
        self.route = route
        self.files = files
        self.results = results
        self.max_chars = max_chars
        self.notices = notices
        self.file_changes = file_changes
        self.storm = storm
        self.journal = journal
        self.stages = stages
        self.tracer = tracer
        self.counters = counters if counters is not None else Counters()
        self.profiles = profiles
        self.profile = profile
        self.depth = depth
        self.mode = mode
        self.turn_origin = turn_origin
        self.cancel_event = cancel_event if cancel_event is not None else CancelEvent()
        self.cancel_grace_s = cancel_grace_s
        #: ``(mode, because)``: the stricter fallback a plugin set, if any
        self.fallback_floor: tuple[str, str] | None = None
        #: the stages each tool's calls run here (`_pipeline.plan`), by name, and the hooks'
        #: generation they were planned under
        self.plans: dict[str, tuple[Any, ...]] = {}
        self.plans_generation = -1

    @property
    def id(self) -> str:
        """The session's id (the same after a resume: read from the session each time)."""
        return self.view.id

    def count(self, name: str, n: int = 1) -> None:
        self.counters.count(name, n)

    def tool(self, name: str) -> ToolSpec | None:
        return self.tools.get(name)

    def is_visible(self, name: str) -> bool:
        return name in self.visible

    def tighten_fallback(self, mode: str, because: str) -> None:
        """Make the permission fallback at least as strict as ``mode`` (never looser);
        ``because`` is said in the refusals it causes (`Session.tighten_fallback`)."""
        if mode not in STRICTNESS:
            raise ValueError('mode must be "allow", "ask" or "deny"')
        current = self.fallback_floor
        if current is None or STRICTNESS[mode] > STRICTNESS[current[0]]:
            self.fallback_floor = (mode, because)

    def fallback_for(self, mode: str) -> tuple[str, str | None]:
        """The fallback a call gets when nothing decides, given the host's (or the proxy
        target's) ``mode``: the stricter of it and `tighten_fallback`'s, with the reason when
        the session's own is stricter."""
        floor = self.fallback_floor
        if floor is None or STRICTNESS.get(mode, 0) >= STRICTNESS[floor[0]]:
            return mode, None
        return floor


__all__ = ["COUNTERS", "STRICTNESS", "Counters", "SessionState"]
