"""Small JSON state files in the session directory, written atomically (temp + rename)."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from callgate.files import replace_file

log = logging.getLogger("callgate.workflow")


class StateFile:
    """``<session_dir>/<name>``: ``{"version": 1, ...}``; without a directory, nothing is kept."""

    VERSION = 1

    def __init__(self, directory: str | None, name: str) -> None:
        self.path = os.path.join(directory, name) if directory else None

    def load(self) -> dict[str, Any] | None:
        """The stored object, or None when there is none or it cannot be used (logged)."""
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as fh:
                data = json.loads(fh.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            log.warning("ignoring unreadable %s", self.path, exc_info=True)
            return None
        if not isinstance(data, dict) or data.get("version") != self.VERSION:
            log.warning("ignoring %s: unknown version", self.path)
            return None
        return data

    def save(self, body: dict[str, Any]) -> None:
        if self.path is None:
            return
        payload = {"version": self.VERSION, **body}
        data = (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode()
        replace_file(self.path, data, mode=0o600)
