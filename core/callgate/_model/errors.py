"""Exceptions: the ones tools raise to report a failure, and the ones boot raises."""

from __future__ import annotations

from typing import Any

from .values import ERROR_KINDS, ToolResult


class ToolError(Exception):
    """Raised by a tool (or a core service it calls) to return a structured error result.

    `kind` is one of host.md §7's kinds; `signature` is the plugin's code
    (`FS_STALE_VERSION`, `GOAL_NOT_FOUND`, ...) when it has one.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        signature: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}; use one of {sorted(ERROR_KINDS)}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.signature = signature
        self.meta = meta or {}

    def to_result(self) -> ToolResult:
        return ToolResult.failure(self.kind, self.message, self.signature, self.meta)


class BootError(Exception):
    """The host cannot boot: a plugin failed, two plugins clash, or the config is wrong."""


class ConfigError(BootError):
    """A configuration value is wrong; the message names the file, key and line."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        where = ""
        if file:
            where = file
            if line:
                where += f":{line}"
            where += ": "
        if key:
            where += f"{key}: "
        super().__init__(where + message)
        self.file = file
        self.key = key
        self.line = line
        self.reason = message
