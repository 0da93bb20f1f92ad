"""The plugin's hook implementations: register the one shell of this host plus the job
tools at boot, and end a session's jobs when it closes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from callgate import Host, Registry, hookimpl
from callgate_commandline import COMMAND

from ._keys import JOBS
from ._native import FACES
from .config import CONFIG_SCHEMA, ShellNotFound, real_os, select_shell
from .tools.bash import bash_tool
from .tools.job_tools import job_tools
from .tools.pwsh import pwsh_tool

if TYPE_CHECKING:
    from callgate import process

    from ._jobs import JobTable

CONFIG_TABLE = "shell"
SHELLS = ("bash", "pwsh")


def _job_table(session: Any) -> JobTable:
    """The session's job table: the job machinery is imported when a session opens."""
    from ._jobs import JobTable

    return JobTable(session)


@hookimpl
def callgate_register_tools(registry: Registry, host: Host) -> None:
    """``bash`` (POSIX) or ``pwsh`` (Windows or ``[shell] force``), ``job_output``,
    ``job_kill`` and the aliases ``bash_output``, ``kill_shell``, ``wait``."""
    config = registry.add_config(CONFIG_TABLE, CONFIG_SCHEMA)
    # Bash(...) rules and the read-only verdict of strict children judge command lines
    registry.add_subject_kind(COMMAND)
    registry.add_session_extension(JOBS, _job_table)
    try:
        choice = select_shell(host.os, real_os(), config)
    except ShellNotFound as exc:
        raise registry.config_error(str(exc), (CONFIG_TABLE, exc.key)) from None
    # registered for this host's OS only; [shell] force may put pwsh on POSIX
    make = bash_tool if choice.tool == "bash" else pwsh_tool
    shell = make(choice.executable, platforms=(host.os,))
    if choice.tool == "bash":  # the native shapes run bash command lines
        shell = attrs.evolve(shell, native=FACES)
    registry.add(shell)
    for spec in job_tools():
        registry.add(spec)
    # a config shared by both OSes may name the shell this host does not register
    registry.add_rule_names(lambda name: name in SHELLS)


@hookimpl
def callgate_program_environment(host: Host) -> process.Environment:
    """The environment shell commands and jobs get under this host's ``[shell]`` config
    (what a remote workspace's worker must be handed to give its commands the same)."""
    from ._env import command_environment

    return command_environment(host.config("shell"))


@hookimpl
def callgate_session_end(session: Any) -> None:
    """End every background job of the session (≤ 10 s) and remove its logs."""
    table = session.find_extension(JOBS)
    if table is not None:
        from ._jobs import JobTable

        if isinstance(table, JobTable):
            table.close()


@hookimpl
def callgate_results_delivered(call_ids: Any, session: Any) -> None:
    """Mark the jobs whose start result the model now has, so a finished-job notice waits
    until then (called where the jobs run: on a remote session's worker too)."""
    table = session.find_extension(JOBS)
    if table is not None:
        from ._jobs import JobTable

        if isinstance(table, JobTable):
            table.results_delivered(call_ids)
