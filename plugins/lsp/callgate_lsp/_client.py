"""The LSP client side of one server connection: pygls's client plus what a server asks of us.

`Client` is pygls's `BaseLanguageClient` (its JSON-RPC framing, lsprotocol types
and request futures) with the handlers a server expects a client to have:
published diagnostics (kept per document, with the version they describe),
work-done progress (so a query can say the server is still indexing), and
answers to the server's own requests (``workspace/configuration`` from
``[lsp.servers.<lang>] settings``, nulls for the rest). The server's stderr is
drained into a short tail kept for the log only: it never reaches the model,
and an undrained pipe would stall a chatty server.

What the server sends also feeds its readiness model (`_readiness`), and its dynamic
registrations are kept: file watchers (`_watched`) and pull diagnostics
(``textDocument/diagnostic``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from callgate import process
from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

from ._readiness import Readiness
from ._watched import Watchers

log = logging.getLogger("callgate.lsp")

STDERR_TAIL_BYTES = 4096

# pygls logs every message body at INFO (file contents included): keep that out of an
# integrator's INFO log unless they configured the logger themselves.
for _name in ("pygls.protocol.json_rpc", "pygls.protocol.language_server", "pygls.client",
              "pygls.feature_manager"):
    _logger = logging.getLogger(_name)
    if _logger.level == logging.NOTSET:
        _logger.setLevel(logging.WARNING)


@attrs.define
class Published:
    """The diagnostics a server last published for one document."""

    version: int | None
    diagnostics: Sequence[types.Diagnostic]
    #: when it arrived (monotonic): a report older than a change may not include it
    received: float = attrs.field(factory=time.monotonic)


class Client(BaseLanguageClient):
    """One connection to one language server (lives on the manager's event loop)."""

    def __init__(self, settings: Mapping[str, Any], folders: Sequence[types.WorkspaceFolder],
                 version_of: Callable[[str], int | None], watchers: Watchers) -> None:
        super().__init__("callgate-lsp", "0.1.0")
        #: what ``workspace/configuration`` answers (``[lsp.servers.<lang>] settings``, pinned)
        self.settings = settings
        self._folders = list(folders)
        self._version_of = version_of
        self.published: dict[str, Published] = {}
        self.versioned = False  # whether its reports name the version they describe
        self.changed = asyncio.Event()
        self.readiness = Readiness()
        #: the files it wants to hear about (its watcher registrations)
        self.watchers = watchers
        #: registration ids of its dynamic ``textDocument/diagnostic`` (pull) registrations
        self.pull_registrations: set[str] = set()
        self.stderr_tail: deque[bytes] = deque()
        self._stderr_bytes = 0
        self._drain: asyncio.Task[None] | None = None
        self._register_handlers()

    # --- the process ---------------------------------------------------------------

    async def start(self, prepared: process.Prepared) -> None:
        """Spawn the server (prepared by the core's door: sandbox, environment, lifetime) as
        the leader of its own process group, and start reading."""
        command, *args = prepared.argv
        await self.start_io(command, *args, cwd=prepared.cwd, env=dict(prepared.env),
                            start_new_session=True)
        process = self.process
        if process is not None and process.stderr is not None:
            self._drain = asyncio.ensure_future(self._drain_stderr(process.stderr))

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self._server

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(4096):
            self.stderr_tail.append(chunk)
            self._stderr_bytes += len(chunk)
            while self._stderr_bytes > STDERR_TAIL_BYTES and len(self.stderr_tail) > 1:
                self._stderr_bytes -= len(self.stderr_tail.popleft())

    def stderr_text(self) -> str:
        return b"".join(self.stderr_tail).decode("utf-8", "replace")[-STDERR_TAIL_BYTES:]

    # --- what the server sends -------------------------------------------------------

    def _register_handlers(self) -> None:
        feature = self.feature

        @feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
            version = params.version
            if version is None:  # a server without version support: it describes what we sent
                version = self._version_of(params.uri)
            else:
                self.versioned = True
            self.published[params.uri] = Published(version, list(params.diagnostics))
            log.debug("diagnostics of %s (version %s): %d", params.uri, version,
                      len(params.diagnostics))
            self.readiness.heard(evidence=True)
            self._notify()

        @feature(types.PROGRESS)
        def _progress(params: types.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            title = value.get("title") if isinstance(value, dict) else getattr(value, "title",
                                                                                 None)
            self.readiness.progress(params.token, kind, title)
            self._notify()

        @feature(types.CLIENT_REGISTER_CAPABILITY)
        def _register(params: types.RegistrationParams) -> None:
            for registration in params.registrations:
                if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                    self.watchers.register(registration.id, registration.register_options)
                elif registration.method == types.TEXT_DOCUMENT_DIAGNOSTIC:
                    self.pull_registrations.add(registration.id)
            self.readiness.heard(evidence=True)
            self._notify()

        @feature(types.CLIENT_UNREGISTER_CAPABILITY)
        def _unregister(params: types.UnregistrationParams) -> None:
            for item in params.unregisterations:
                self.watchers.unregister(item.id)
                self.pull_registrations.discard(item.id)
            self.readiness.heard()

        @feature(types.WORKSPACE_CONFIGURATION)
        def _configuration(params: types.ConfigurationParams) -> list[Any]:
            self.readiness.heard()
            return [self._setting(item.section) for item in params.items]

        @feature(types.WORKSPACE_WORKSPACE_FOLDERS)
        def _folders(params: None) -> list[types.WorkspaceFolder]:
            return self._folders

        @feature(types.WORKSPACE_APPLY_EDIT)
        def _apply_edit(params: types.ApplyWorkspaceEditParams
                        ) -> types.ApplyWorkspaceEditResult:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason="callgate's LSP tools are read-only")

        @feature(types.WINDOW_SHOW_DOCUMENT)
        def _show_document(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            return types.ShowDocumentResult(success=False)

        for method in (types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WINDOW_SHOW_MESSAGE_REQUEST,
                       types.WORKSPACE_DIAGNOSTIC_REFRESH, types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
                       types.WORKSPACE_INLAY_HINT_REFRESH, types.WORKSPACE_CODE_LENS_REFRESH,
                       types.WORKSPACE_INLINE_VALUE_REFRESH, types.WORKSPACE_FOLDING_RANGE_REFRESH):
            feature(method)(_null)
        def heard(params: Any) -> None:
            self.readiness.heard()

        for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE, types.TELEMETRY_EVENT,
                       types.LOG_TRACE):
            feature(method)(heard)

    def _setting(self, section: str | None) -> Any:
        found: Any = self.settings
        for part in (section or "").split(".") if section else ():
            if not isinstance(found, Mapping) or part not in found:
                return None
            found = found[part]
        return found if section else (dict(found) or None)

    def _notify(self) -> None:
        event, self.changed = self.changed, asyncio.Event()
        event.set()

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.debug("language server protocol error: %s", error)


def _null(params: Any) -> None:
    return None

