"""The environment of every command (shell.md §1.4): the host's, without secrets (the
core's filter, `callgate.process.is_secret`, unless ``[shell] filter_secret_env = false``),
then forced non-interactive so nothing waits for a terminal, a pager, an editor or a
password."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from callgate import process

FORCED = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
}


def command_environment(config: Mapping[str, Any]) -> process.Environment:
    """What the door builds a command's environment from: all of the host's, the secrets
    dropped unless the user turned the filter off, `FORCED` on top. ``PATH`` is kept as the
    host has it: the model writes the command anyway."""
    return process.Environment(
        inherit="all", secrets=not config.get("filter_secret_env", True),
        drop=tuple(config.get("secret_env_names", ())), set=FORCED,
        path_from_workspace=True)


def command_env(config: Mapping[str, Any], base: Mapping[str, str] | None = None
                ) -> dict[str, str]:
    """The environment for one command, read from the host's (or ``base``) now."""
    return command_environment(config).build(base=base)
