"""The ``[sessions]`` table as a host would read it, without booting a host: for a command
that only reads the session store (``callgate sessions``) and must find and prune the same
store the host records into."""

from __future__ import annotations

import os
from typing import Any

from .._config import load as _config
from .._store.locations import resolve_location
from .host import CORE_TABLES


def sessions_settings(
    config: str | os.PathLike[str] | None = None, workspace: str | os.PathLike[str] | None = None
) -> tuple[dict[str, Any], str]:
    """``(table, location)``: the ``[sessions]`` table a host booted with ``config`` (a file)
    and ``workspace`` reads, defaults applied (`callgate.host.ConfigError` names a bad key's
    file and line), and the store location it names, resolved as the host resolves it (a
    relative path from the file that set it). No plugin is loaded."""
    source = _config.load(config, workspace)
    source.schema_for = CORE_TABLES.get
    table = _config.validate_table(source, "sessions", CORE_TABLES["sessions"])
    origin = source.origin(("sessions", "store"))
    location = resolve_location(table["store"] or None, origin.file if origin else None)
    return table, location
