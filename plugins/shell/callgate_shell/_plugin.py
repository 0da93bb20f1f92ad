"""The plugin's hook implementations: register the one shell of this host plus the job
tools at boot, and end a session's jobs when it closes."""

from __future__ import annotations

from typing import Any

from callgate import ConfigError, hookimpl

from . import hookspecs
from ._jobs import JobTable
from ._select import CONFIG_SCHEMA, ShellNotFound, boot_config, real_os, select_shell
from .bash import bash_tool
from .job_tools import job_tools
from .pwsh import pwsh_tool

CONFIG_TABLE = "shell"
EXTENSION = "jobs"


def _config_error(host: Any, exc: ShellNotFound) -> ConfigError:
    source = getattr(host, "config_source", None)
    if source is not None and hasattr(source, "error"):
        return source.error(str(exc), (CONFIG_TABLE, exc.key))
    return ConfigError(str(exc), key=f"{CONFIG_TABLE}.{exc.key}")


@hookimpl
def callgate_register_tools(registry: Any, host: Any) -> None:
    """``bash`` (POSIX) or ``pwsh`` (Windows or ``[shell] force``), ``job_output``,
    ``job_kill`` and the aliases ``bash_output``, ``kill_shell``, ``wait``."""
    registry.add_hookspecs(hookspecs)
    registry.add_config(CONFIG_TABLE, CONFIG_SCHEMA)
    registry.add_session_extension(EXTENSION, JobTable)
    source = getattr(host, "config_source", None)
    raw = source.data.get(CONFIG_TABLE, {}) if source is not None else {}
    try:
        choice = select_shell(host.os, real_os(), boot_config(raw))
    except ShellNotFound as exc:
        raise _config_error(host, exc) from None
    # registered for this host's OS only; [shell] force may put pwsh on POSIX
    make = bash_tool if choice.tool == "bash" else pwsh_tool
    registry.add(make(choice.executable, platforms=(host.os,)))
    for spec in job_tools():
        registry.add(spec)


@hookimpl
def callgate_session_end(session: Any) -> None:
    """End every background job of the session (≤ 10 s) and remove its logs."""
    table = getattr(session, EXTENSION, None)
    if isinstance(table, JobTable):
        table.close()


@hookimpl
def callgate_shape_result(call: Any, tool: Any, result: Any, session: Any) -> None:
    """Count results, so a finished-job notice waits until its start result was delivered."""
    table = getattr(session, EXTENSION, None)
    if isinstance(table, JobTable):
        table.result_shaped(call.id)
