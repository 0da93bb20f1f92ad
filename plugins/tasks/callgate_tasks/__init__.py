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
``continue_from``. ``[tasks] max_parallel`` (1-8, default 4) bounds concurrency.

Entry point: ``[project.entry-points.callgate] tasks = "callgate_tasks"``.
"""

from . import hookspecs
from ._book import SubagentBook
from ._model import (
    SubagentError,
    SubagentOutcome,
    SubagentRecord,
    SubagentRequest,
    SubagentRunner,
)
from ._plugin import callgate_register_tools

__all__ = [
    "SubagentBook",
    "SubagentError",
    "SubagentOutcome",
    "SubagentRecord",
    "SubagentRequest",
    "SubagentRunner",
    "callgate_register_tools",
    "hookspecs",
]
