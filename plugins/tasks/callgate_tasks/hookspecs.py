"""What the tasks plugin needs from the integrator: a subagent runner.

``task``, ``parallel_tasks`` and ``read_subagent_result`` exist in a session
only when an implementation returns a runner for it (asked at session open
and again when a task runs).
"""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_subagent_runner(session):
    """Return a `SubagentRunner` (``async run(SubagentRequest) -> SubagentOutcome``) for the
    session, or ``None`` when the session cannot run subagents."""
