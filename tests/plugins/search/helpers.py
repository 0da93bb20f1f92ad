"""Shared helpers for the search and code plugin tests."""

from __future__ import annotations

from typing import Any

import callgate_files
from callgate import ToolResult


def reader_plugin() -> Any:
    """The files plugin, for ``read_file`` (observations for delete_symbol, concurrency)."""
    return callgate_files


def lines(result: ToolResult) -> list[str]:
    return result.text.split("\n")
