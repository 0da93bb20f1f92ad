"""The sessions plugin's hook implementation (its three tools), and the ``callgate sessions``
command it adds to the command line (the ``callgate.commands`` entry point)."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .tools.specs import TOOLS


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    for spec in TOOLS:
        registry.add(spec)


def register_command(subparsers: Any) -> None:
    """``callgate sessions``: list, show, search, export and prune the session store."""
    from . import _cli  # the command's machinery: loaded for ``callgate sessions`` only

    _cli.register(subparsers)
