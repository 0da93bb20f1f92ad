"""callgate's subagent tools: ``task``, ``parallel_tasks`` and ``read_subagent_result``.

The host does not run models; the integrator does. Implement the runner hook
in an in-process plugin and the three tools appear in that session::

    from callgate import hookimpl
    from callgate_tasks import SubagentOutcome

    class Runner:
        async def run(self, request):                # request: SubagentRequest
            answer = await my_model_loop(request.prompt, request.session)
            return SubagentOutcome(status="completed", answer=answer)

    class MyIntegration:
        @hookimpl
        def callgate_subagent_runner(self, session):
            return Runner()

Each child gets a stable reference (``sa_`` + 16 hex), its own child session
(same workspace, empty observation ledger, no turn origin), and a record in
``<session_dir>/subagents/<ref>.json``. Results stay within ``[results]
max_chars``: long answers are previewed fairly and read in pages.
Raise `SubagentError(code, retryable)` for failures the model may retry with
``continue_from``. ``[tasks] max_parallel`` (1-8, default 4) bounds concurrency and
``[tasks] max_depth`` (1-5, default 3) how deep children nest.

Other plugins that run children (``fleet``) use the same machinery::

    from callgate import ChildProfile
    from callgate_tasks import Job, children, depth_profile, runner_for

    runner = runner_for(ctx.session)              # None: no runner for this session
    record = ctx.session.extension(SUBAGENTS).start("scan docs")
    profile = depth_profile(ctx.session, ChildProfile(name="explore", read_only=True))
    [outcome] = await children(ctx, runner).run_all([Job(record, prompt, profile=profile)])
    record = ctx.session.extension(SUBAGENTS).finish(record, outcome)

``fleet`` runs 2-64 children as one plan (ids, ``depends_on``, ``read_only``,
``write_paths``), refusing bad graphs and overlapping write claims before any child
starts; ``[tasks] fleet_max_parallel`` (default 16) and ``fleet_max_writers`` (default
4) cap it. A background fleet is read with ``fleet_output`` (see `tools.fleet`).

Entry point: ``[project.entry-points.callgate] tasks = "callgate_tasks"``.
"""

from typing import TYPE_CHECKING, Any

from . import hookspecs
from ._keys import FLEETS, SUBAGENTS
from ._model import (
    SubagentError,
    SubagentOutcome,
    SubagentRecord,
    SubagentRequest,
    SubagentRunner,
)
from .plugin import STRICT_DENIED, callgate_register_tools, callgate_session_end

if TYPE_CHECKING:
    from ._book import SubagentBook
    from ._run import ChildRunner, Job
    from .tools.task import children, depth_profile, nesting_available, runner_for

#: imported on first use: the book, the runner and the tools' code are no part of
#: registering (issue 38)
_LAZY = {"SubagentBook": "_book", "ChildRunner": "_run", "Job": "_run",
         "children": "tools.task", "depth_profile": "tools.task",
         "nesting_available": "tools.task", "runner_for": "tools.task"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)

__all__ = [
    "FLEETS",
    "STRICT_DENIED",
    "SUBAGENTS",
    "ChildRunner",
    "Job",
    "SubagentBook",
    "SubagentError",
    "SubagentOutcome",
    "SubagentRecord",
    "SubagentRequest",
    "SubagentRunner",
    "callgate_register_tools",
    "callgate_session_end",
    "children",
    "depth_profile",
    "hookspecs",
    "nesting_available",
    "runner_for",
]
