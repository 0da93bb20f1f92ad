"""Where `ToolContext.progress` reports go: the sink an integrator installs for the calls
it runs (`Session.progress_to`), carried by a context variable into tasks and threads."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

#: ``sink(done, total, message)``: where `ToolContext.progress` goes (`Session.progress_to`)
ProgressSink = Callable[[float, "float | None", "str | None"], None]
PROGRESS_SINK: ContextVar[ProgressSink | None] = ContextVar("callgate_progress", default=None)

__all__ = ["PROGRESS_SINK", "ProgressSink"]
