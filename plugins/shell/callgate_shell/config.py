"""Which shell this host gets, decided once at boot (shell.md §1.1), and the ``[shell]``
config table."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from callgate import process

#: ``x-workspace`` (callgate's config layering): what a workspace config the user config does
#: not trust may do; it never picks the program every command runs through.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "force": {"enum": ["auto", "bash", "pwsh"], "default": "auto", "x-workspace": "user",
                  "x-kind": "program"},
        "bash_path": {"type": "string", "minLength": 1, "default": "bash",
                      "x-workspace": "user", "x-kind": "program"},
        "pwsh_path": {"type": "string", "minLength": 1, "default": "pwsh",
                      "x-workspace": "user", "x-kind": "program"},
        "filter_secret_env": {"type": "boolean", "default": True,
                              "x-workspace": [False, True], "x-kind": "scope"},
        # names to drop from commands' environment: adding drops more
        "secret_env_names": {"type": "array", "items": {"type": "string"}, "default": [],
                             "x-workspace": "add", "x-kind": "denylist"},
        "background_jobs": {"type": "boolean", "default": True, "x-workspace": [True, False],
                            "x-kind": "scope"},
        "max_running_jobs": {"type": "integer", "minimum": 1, "default": 16,
                             "x-workspace": "min", "x-kind": "limit"},
        # user-only: 0 means no limit, so "the smaller wins" would let a workspace lift it
        "job_max_lifetime_ms": {"type": "integer", "minimum": 0, "default": 0,
                                "x-workspace": "user", "x-kind": "limit"},
        "max_capture_bytes": {"type": "integer", "minimum": 1024, "default": 67_108_864,
                              "x-workspace": "min", "x-kind": "limit"},
    },
}
DEFAULTS: dict[str, Any] = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}


@attrs.frozen
class ShellChoice:
    """The shell tool to register: ``bash`` or ``pwsh``, and the program it runs."""

    tool: str
    executable: str


class ShellNotFound(Exception):
    """The chosen shell's program is not installed; ``key`` is the config key to fix."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


def real_os() -> str:
    """The OS this Python runs on, in ``host.os`` terms."""
    return "windows" if sys.platform == "win32" else "posix"


def select_shell(host_os: str, machine_os: str, config: Mapping[str, Any],
                 which: Callable[[str], str | None] = process.which) -> ShellChoice:
    """``bash`` on POSIX, ``pwsh`` on Windows, or what ``force`` says.

    The program is looked up on ``PATH`` without its relative entries
    (`callgate.process.which`: boot's working directory is often the workspace). When
    ``host_os`` differs from ``machine_os`` (a forced surface, for tests and for generating
    the other OS's contract) the program is not looked up; a call then fails to start.
    Otherwise a missing program raises `ShellNotFound`.
    """
    force = config.get("force", "auto")
    tool = force if force in ("bash", "pwsh") else ("pwsh" if host_os == "windows" else "bash")
    lookup = host_os == machine_os
    if tool == "bash":
        wanted = config.get("bash_path", "bash")
        if not lookup:
            return ShellChoice("bash", wanted)
        found = which(wanted)
        if found is None:
            raise ShellNotFound(f"cannot find the bash program {wanted!r}; install bash or set "
                                "[shell] bash_path to its location", "bash_path")
        return ShellChoice("bash", found)
    wanted = config.get("pwsh_path", "pwsh")
    if not lookup:
        return ShellChoice("pwsh", wanted)
    found = which(wanted)
    if found is None and wanted == "pwsh" and machine_os == "windows":
        found = which("powershell")
    if found is None:
        key = "force" if force == "pwsh" and wanted == DEFAULTS["pwsh_path"] else "pwsh_path"
        also = " or powershell" if machine_os == "windows" and wanted == "pwsh" else ""
        raise ShellNotFound(f"cannot find the PowerShell program {wanted!r}{also} for the pwsh "
                            "tool; install PowerShell (pwsh), set [shell] pwsh_path, or leave "
                            '[shell] force at "auto"', key)
    return ShellChoice("pwsh", found)
