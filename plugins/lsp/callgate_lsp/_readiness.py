"""Whether a server has loaded the project yet: the readiness model of one server.

A server answers from the moment ``initialize`` returns, but what it answers before it has
found the project's files is incomplete: basedpyright's first ``textDocument/references``
lists the declaration only (it has not enumerated the workspace yet), and
typescript-language-server answers from a syntax-only server until tsserver has loaded the
project. No single signal says "loaded" for every server, so several count:

- **work-done progress** (``$/progress`` begin ... end: gopls "Setting up workspace",
  clangd "indexing", typescript-language-server "Initializing JS/TS language features"):
  while a token is open the server is busy;
- **evidence** that it has done a round of work on the project: a progress token ended, a
  diagnostics report (pushed, or answered to a pull: basedpyright answers its first
  ``textDocument/diagnostic`` only once the workspace is set up), a dynamic registration
  (servers register their watchers once they know the project);
- a **settle window**: ready once there is evidence, no progress is open and the server has
  sent nothing for `SETTLE_S` (a server that never reports anything is taken as ready after
  `FALLBACK_S` of such quiet).

Readiness is sticky: once loaded, later busy spells (re-checking after an edit) are
"settling" (`Server.changed_at`) or "indexing" (an open progress token), not "loading".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

SETTLE_S = 0.5
FALLBACK_S = 3.0
POLL_S = 0.05


class Readiness:
    """One server's loading state (on the manager's loop)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.started = clock()
        self.last_heard = self.started
        self.active: dict[str | int, str] = {}  # open progress tokens -> their titles
        self.evidence = False
        self._ready = False

    def heard(self, evidence: bool = False) -> None:
        """The server sent something (``evidence``: a sign it has worked on the project)."""
        self.last_heard = self._clock()
        if evidence:
            self.evidence = True

    def progress(self, token: str | int, kind: str | None, title: str | None = None) -> None:
        if kind == "begin":
            self.active[token] = title or ""
        elif kind == "end" and self.active.pop(token, None) is not None:
            self.evidence = True
        self.heard()

    @property
    def busy(self) -> bool:
        """Whether a work-done progress of the server is open."""
        return bool(self.active)

    @property
    def ready(self) -> bool:
        """Whether the server has loaded the project (sticky once true)."""
        if self._ready:
            return True
        if self.active:
            return False
        now = self._clock()
        quiet = now - self.last_heard
        if quiet >= SETTLE_S and (self.evidence or now - self.started >= FALLBACK_S):
            self._ready = True
        return self._ready

    async def wait(self, timeout_s: float, nudge: Callable[[], object] | None = None) -> bool:
        """Wait up to ``timeout_s`` until `ready`; ``nudge()`` (a coroutine or nothing) is
        awaited on the way, once per poll, while it returns one (a pull that prompts the
        server). Returns `ready`."""
        deadline = self._clock() + timeout_s
        while not self.ready:
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False
            step = nudge() if nudge is not None else None
            if asyncio.iscoroutine(step):
                try:
                    await asyncio.wait_for(step, remaining)
                except TimeoutError:
                    return self.ready
                continue
            await asyncio.sleep(min(POLL_S, remaining))
        return True
