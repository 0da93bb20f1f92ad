"""`ToolContext`: everything a tool may touch while it runs, and nothing more."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # annotations only: the package's import (a listing) needs none of them
    from .._files.access import FileAccess
    from .._files.gate import GatedPath
    from .._fs.workspace import Workspace
    from .._model.spec import ToolSpec
    from .._model.values import ToolCall
    from .view import HostView, SessionView

log = logging.getLogger("callgate")


@attrs.define
class ToolContext:
    """What a tool's ``execute`` (and ``validate``/``preview``) receives besides its arguments.

    - ``session``: the session (id, directory, turn origin, mode, extensions).
    - ``workspace``: ``resolve(path, write=...)`` confines a path; ``relative`` names it.
    - ``files``: the file API (`callgate.files.FileAccess`): atomic writes that record the
      new version; reads that record an observation only when asked (``observe=True``).
    - ``config``: this plugin's config table (validated, defaults applied).
    - ``notify(text)``: a notice shown once with the session's next results.
    - ``cancelled``: set when the integrator cancels the batch or the session.
    - ``gated``: the path arguments the host gate checked, by argument name.
    - ``expected_versions``: for an approved preview, the versions it was computed on.
    - ``progress(done, total, message)``: how far a long call is, for an integrator that
      shows it (``callgate serve`` sends MCP ``notifications/progress``); a no-op otherwise.
    """

    session: SessionView
    call: ToolCall
    tool: ToolSpec
    cancelled: threading.Event = attrs.field(factory=threading.Event)
    gated: dict[str, GatedPath] = attrs.field(factory=dict)
    expected_versions: dict[str, Any] | None = None
    previewing: bool = False

    @property
    def host(self) -> HostView:
        return self.session.host

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    @property
    def files(self) -> FileAccess:
        return self.session.files

    @property
    def config(self) -> dict[str, Any]:
        return self.session.host.plugin_config(self.tool.plugin)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report how far the call is (``done`` only grows: lines, bytes, seconds; ``total``
        if known). Callable from any thread; does nothing when nobody listens (the
        integrator's `Session.progress_to`) or while previewing."""
        from .progress import PROGRESS_SINK  # with the first report, not the package

        sink = PROGRESS_SINK.get()
        if sink is None or self.previewing:
            return
        try:
            sink(float(done), None if total is None else float(total), message)
        except Exception:  # a broken listener never fails the call
            log.exception("a progress listener failed")

    def notify(self, text: str) -> None:
        """Queue a notice (one pending per plugin; a newer one replaces it)."""
        self.session.notices.put(self.tool.plugin or self.tool.name, text)
