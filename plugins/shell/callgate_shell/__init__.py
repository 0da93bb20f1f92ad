"""callgate-shell: the host's one shell and its background jobs (shell.md).

Boot registers ``bash`` on POSIX or ``pwsh`` on Windows (``[shell] force``
overrides), never both; tools never branch on the OS at call time. Both share
the job tools ``job_output`` and ``job_kill`` and the hidden compatibility
aliases ``bash_output``, ``kill_shell`` and ``wait``, which execute for replay
but never appear in a provider schema.

Every command runs in its own process group with stdin on the null device, a
non-interactive environment and the workspace root as cwd; timeouts,
cancellation, ``job_kill`` and session close end the whole group. Background
output goes to a log in the session directory plus a 64 KiB in-memory tail.

Every command is started through the core's door (`callgate.process`): the
session's sandbox (the ``callgate_confine_process`` hook) and the environment
filter apply, and whatever a command leaves running (``setsid``, ``nohup``) ends
with the session. The entry point is this module (``shell = "callgate_shell"``);
integrators read a session's jobs with ``session.extension(JOBS).jobs()``.
"""

from typing import TYPE_CHECKING, Any

from ._keys import JOBS
from .config import CONFIG_SCHEMA, ShellChoice, select_shell
from .plugin import (
    callgate_program_environment,
    callgate_register_tools,
    callgate_results_delivered,
    callgate_session_end,
)

if TYPE_CHECKING:
    from ._jobs import Job, JobTable


def __getattr__(name: str) -> Any:
    """`Job` and `JobTable`, imported on first use: the job machinery is no part of
    registering (issue 38)."""
    if name not in ("Job", "JobTable"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _jobs

    return getattr(_jobs, name)


__all__ = [
    "CONFIG_SCHEMA",
    "JOBS",
    "Job",
    "JobTable",
    "ShellChoice",
    "callgate_program_environment",
    "callgate_register_tools",
    "callgate_results_delivered",
    "callgate_session_end",
    "select_shell",
]
