"""The environment of every command (shell.md §1.4): the host's, optionally without
secrets, then forced non-interactive so nothing waits for a terminal, a pager,
an editor or a password."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

FORCED = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
}
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_PASSWORD", "_ACCESS_KEY")


def is_secret(name: str, extra_names: Iterable[str] = ()) -> bool:
    upper = name.upper()
    return upper.endswith(SECRET_SUFFIXES) or upper in {n.upper() for n in extra_names}


def command_env(config: Mapping[str, Any], base: Mapping[str, str] | None = None
                ) -> dict[str, str]:
    """The environment for one command, read from the host's at call time."""
    env = dict(os.environ if base is None else base)
    if config.get("filter_secret_env"):
        extra = list(config.get("secret_env_names", ()))
        env = {k: v for k, v in env.items() if not is_secret(k, extra)}
    env.update(FORCED)
    return env
