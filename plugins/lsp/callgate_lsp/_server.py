"""One running language server: start, document sync, requests, diagnostics, stop.

Everything here runs on the manager's event loop. A server is started through the
core's door (`callgate.process`: in the session's sandbox with the workspace read-only
and no network where one works, with the host's environment without secrets, its program
paths pinned by `_guards`), as the leader of a new process group, with ``initialize``
under a timeout; it ends with
``shutdown`` (2 s), ``exit``, and a SIGKILL of its whole group, which is also
what happens to the group of a server that died on its own (its children go
with it). Documents are synced by content: the first query of a file sends
``didOpen``, a later one a full-text ``didChange`` when the bytes differ from
what the server has (so edits made through ``bash`` or outside the host are
seen); the other open documents are re-checked by size and mtime.

Files that change on disk (the session's tools, its watcher: `files_changed`) reach the
server at once as ``workspace/didChangeWatchedFiles`` (the files its watchers ask for), an
open one as a ``didChange`` of its new content; a server that reports diagnostics by push
then gets every other open document again at a new version, so the next report of each is
known to include the change. Diagnostics are pulled (``textDocument/diagnostic``) from a
server that offers it, which answers for the current state, else awaited as pushed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import signal
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from callgate import ToolError, process
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from . import _guards
from ._client import Client, Published
from ._positions import UTF8, UTF16, UTF32, split_lines
from ._table import ServerSpec
from ._watched import EVENT_TYPES, Watchers

log = logging.getLogger("callgate.lsp")

T = TypeVar("T")

SHUTDOWN_TIMEOUT_S = 2.0
EXIT_WAIT_S = 1.0
CONTENT_MODIFIED = -32801
CONTENT_MODIFIED_TRIES = 5
CONTENT_MODIFIED_PAUSE_S = 0.4
MAX_OPEN_DOCUMENTS = 64
WATCH_S = 0.1
SETTLE_S = 0.3
#: how long a change's re-sync of an open file waits for a diagnostics check of that file
#: already under way (its before-edit content must be reported first)
CHECK_WAIT_S = 5.0
#: how long a change counts as possibly unsettled for the files the server has not
#: reported on since
SETTLING_S = 30.0
SERVER_CANCELLED = -32802
PULL_TRIES = 5
MAX_SIGNATURES = 4096


class ServerFailed(Exception):
    """The server could not start, or exited: ``reason`` is one short clause for the model."""

    def __init__(self, reason: str, hung: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hung = hung  # it did not answer (rather than exited): not worth retrying at once
        self.during = False  # set when it happened during a query, not while starting


class StillIndexing(Exception):
    """The server kept answering ContentModified: it is busy (indexing, re-analysing)."""


@attrs.define
class Document:
    """What the server has of one file: the text we sent and the version it carries."""

    path: str
    uri: str
    version: int
    digest: bytes
    text: str
    lines: list[str]
    size: int
    mtime_ns: int


def uri_of(path: str) -> str:
    uri = from_fs_path(path)
    assert uri is not None
    return uri


def decode(content: bytes) -> str:
    """File bytes as the text an editor would send (a UTF-8 BOM is not part of the text)."""
    text = content.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def describe_exit(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class Server:
    """A started server of one language for one session."""

    def __init__(self, spec: ServerSpec, root: str, session: Any = None,
                 server_paths: Sequence[str] = ()) -> None:
        self.spec = spec
        #: ``[lsp] server_paths``: where else the user installs servers (searched last)
        self.server_paths = tuple(server_paths)
        self.root = root
        self.session = session
        #: whether the session's sandbox confines it (known once started)
        self.confined = False
        self.initialization_options: Any = spec.initialization_options
        self.encoding = UTF16
        self.capabilities: types.ServerCapabilities | None = None
        self.documents: OrderedDict[str, Document] = OrderedDict()
        folder = types.WorkspaceFolder(uri=uri_of(root), name=os.path.basename(root) or root)
        self.client = Client(spec.settings, [folder], self._version_of,
                             Watchers(root, spec.extensions))
        self.started_at = 0.0
        self._stopping = False
        self._watcher: asyncio.Future[None] | None = None
        #: whether ``initialize`` offered pull diagnostics (``diagnosticProvider``)
        self.pull_offered = False
        #: path -> when a change to it reached the server (for "may still be settling")
        self.changed_at: dict[str, float] = {}
        #: path -> (size, mtime, inode) last told to the server (None: gone), so a change
        #: seen twice (the tool, then the watcher) is told once
        self._told: OrderedDict[str, tuple[int, int, int] | None] = OrderedDict()
        self._changes = asyncio.Lock()
        #: uri -> ((version, epoch), the pull): one pull per state of the server's files
        self._pulls: dict[str, tuple[tuple[int, int], asyncio.Future[Published]]] = {}
        #: counts what changed the server's view of the files (a sync, a file event)
        self._epoch = 0

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self, timeout_s: float) -> None:
        """Spawn, ``initialize`` (within ``timeout_s``), ``initialized``; `ServerFailed` if not,
        `ToolError` when it must not start here (not found; needs a sandbox there is not)."""
        command, args = self.spec.launch(self.session, self.server_paths)
        guard = _guards.guard_for(self.spec, command)
        roots = self.session.workspace.read_roots if self.session is not None else ()
        self.initialization_options = _guards.initialization_options(self.spec, command, roots)
        try:
            env = {**guard.env, **self.spec.env}

            def prepare() -> process.Prepared:
                return process.prepare(
                    self.session, [command, *args], workspace="read", network=False,
                    sandbox=guard.sandbox, because=guard.because,
                    env=process.Environment(set=env), cwd=self.root,
                    purpose=f"language server {self.spec.label}")

            prepared = prepare()
            moved = {k: v for k, v in guard.confined_env.items() if k not in self.spec.env}
            if prepared.confined and moved:  # nothing started yet: prepare it again with them
                env.update(moved)
                prepared = prepare()
            self.confined = prepared.confined
            self.client.settings = _guards.settings(self.spec, command, self.confined,
                                                    self.session)
            await self.client.start(prepared)
        except OSError as exc:
            raise ServerFailed(f"could not be started ({exc.strerror or exc})") from None
        except ToolError as exc:
            if exc.signature != process.SANDBOX_REQUIRED:
                raise
            raise ToolError(exc.kind, f"{exc.message}; to run it unconfined anyway, set "
                            f'[lsp.servers.{self.spec.language}] sandbox = "if_available" in '
                            "your user config", exc.signature,
                            {**(exc.meta or {}), "language": self.spec.language}) from None
        self.started_at = time.monotonic()
        self._watcher = asyncio.ensure_future(self._watch())
        try:
            result = await self._until_exit(self.client.initialize_async(self._initialize_params()),
                                            timeout_s)
        except TimeoutError:
            self.kill()
            raise ServerFailed(f"did not answer initialize within {timeout_s:g} s",
                               hung=True) from None
        except ServerFailed:
            self.kill()
            raise
        except JsonRpcException as exc:
            self.kill()
            raise ServerFailed(f"refused initialize ({exc.message})") from None
        self.capabilities = result.capabilities
        self.pull_offered = result.capabilities.diagnostic_provider is not None
        encoding = result.capabilities.position_encoding
        self.encoding = encoding if encoding in (UTF8, UTF16, UTF32) else UTF16
        self.client.initialized(types.InitializedParams())

    def _initialize_params(self) -> types.InitializeParams:
        caps = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[UTF8, UTF16]),
            workspace=types.WorkspaceClientCapabilities(
                configuration=True, workspace_folders=True,
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True, relative_pattern_support=True)),
            window=types.WindowClientCapabilities(work_done_progress=True),
            text_document=types.TextDocumentClientCapabilities(
                synchronization=types.TextDocumentSyncClientCapabilities(),
                diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=True),
                definition=types.DefinitionClientCapabilities(link_support=True),
                references=types.ReferenceClientCapabilities(),
                hover=types.HoverClientCapabilities(
                    content_format=[types.MarkupKind.PlainText, types.MarkupKind.Markdown]),
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                    version_support=True),
            ),
        )
        # a confined server cannot see this process (a pid namespace of its own): given our
        # pid, servers that watch their client (vscode-languageserver) would exit at once
        return types.InitializeParams(
            process_id=None if self.confined else os.getpid(), root_uri=uri_of(self.root),
            root_path=self.root, workspace_folders=self.client._folders, capabilities=caps,
            initialization_options=self.initialization_options,
            client_info=types.ClientInfo(name="callgate-lsp", version="0.1.0"))

    @property
    def pid(self) -> int | None:
        process = self.client.process
        return process.pid if process is not None else None

    @property
    def alive(self) -> bool:
        process = self.client.process
        return process is not None and process.returncode is None and not self.client.stopped

    def exit_reason(self) -> str:
        process = self.client.process
        return describe_exit(process.returncode if process is not None else None)

    async def _watch(self) -> None:
        """Kill the group as soon as the server process is gone.

        pygls fails the pending requests once the process is reaped *and* its pipes are
        closed; a child that inherited them (and outlived the server) would keep them open,
        so a dead server is noticed by its exit status and its group is ended."""
        process = self.client.process
        while process is not None and process.returncode is None:
            await asyncio.sleep(WATCH_S)
        if not self._stopping:
            log.debug("language server %s %s", self.spec.label, self.exit_reason())
        self.kill()

    def kill(self) -> None:
        """SIGKILL the server's process group (its children too); safe to repeat."""
        pid = self.pid
        if pid is None:
            return
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    async def stop(self) -> None:
        """``shutdown`` (≤ 2 s) and ``exit`` while it is alive, then kill the group and reap."""
        self._stopping = True
        if self.alive:
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), SHUTDOWN_TIMEOUT_S)
                self.client.exit(None)
                process = self.client.process
                if process is not None:
                    if process.stdin is not None:  # EOF too: some servers wait for it
                        await process.stdin.drain()
                        process.stdin.close()
                    await asyncio.wait_for(process.wait(), EXIT_WAIT_S)
            except Exception:  # a hung or dying server is killed below either way
                pass
        self.kill()
        await self.reap()

    async def reap(self) -> None:
        """Wait for the (killed) process and let pygls's reader tasks finish."""
        process = self.client.process
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                log.warning("language server %s (pid %s) did not exit after SIGKILL",
                            self.spec.label, process.pid)
        try:
            await asyncio.wait_for(self.client.stop(), 2)
        except Exception:
            for task in self.client._async_tasks:
                task.cancel()
        for task in (self.client._drain, self._watcher):
            if task is not None:
                task.cancel()
        tail = self.client.stderr_text().strip()
        if tail:
            log.debug("language server %s stderr (tail):\n%s", self.spec.label, tail)

    # --- requests ---------------------------------------------------------------------------

    async def _until_exit(self, request: Awaitable[T], timeout_s: float) -> T:
        """Await ``request`` within ``timeout_s``; `ServerFailed` if the server exits meanwhile."""
        try:
            async with asyncio.timeout(timeout_s):  # no task of its own (as wait_for makes)
                return await request
        except RuntimeError as exc:  # pygls fails pending requests when the process exits
            if not self.alive or "exited" in str(exc):
                process = self.client.process
                if process is not None:
                    await asyncio.wait({asyncio.ensure_future(process.wait())}, timeout=1)
                raise ServerFailed(self.exit_reason()) from None
            raise

    async def request(self, what: str, send: Callable[[], Awaitable[T]], timeout_s: float) -> T:
        """One request (``what`` names it in errors), retried while the server answers
        ContentModified (5 × 400 ms); a timeout or an error answer is a `ToolError`."""
        for attempt in range(CONTENT_MODIFIED_TRIES):
            if not self.alive:
                raise ServerFailed(self.exit_reason())
            try:
                return await self._until_exit(send(), timeout_s)
            except TimeoutError:
                raise ToolError("timeout", f"language server {self.spec.label} did not answer "
                                f"{what} within {timeout_s:g} s ([lsp] request_timeout_s)",
                                "LSP_TIMEOUT") from None
            except JsonRpcException as exc:
                if exc.code != CONTENT_MODIFIED:
                    raise ToolError("tool_error", f"language server {self.spec.label} answered "
                                    f"{what} with an error: {exc.message} (code {exc.code})",
                                    "LSP_REQUEST_FAILED", {"code": exc.code}) from None
                if attempt + 1 < CONTENT_MODIFIED_TRIES:
                    await asyncio.sleep(CONTENT_MODIFIED_PAUSE_S)
        raise StillIndexing()

    @property
    def indexing(self) -> bool:
        """Whether a work-done progress of the server is open (loading, indexing)."""
        return self.client.readiness.busy

    @property
    def readiness(self) -> Any:
        return self.client.readiness

    @property
    def pulls(self) -> bool:
        """Whether its diagnostics are pulled (``textDocument/diagnostic``)."""
        return self.pull_offered or bool(self.client.pull_registrations)

    # --- documents ---------------------------------------------------------------------------

    def _version_of(self, uri: str) -> int | None:
        doc = self.documents.get(uri)
        return doc.version if doc is not None else None

    def sync(self, path: str, content: bytes, st: os.stat_result | None = None) -> Document:
        """Give the server ``content`` as the text of ``path``: ``didOpen`` the first time,
        a full-text ``didChange`` when it differs from what the server has."""
        uri = uri_of(path)
        digest = hashlib.blake2b(content, digest_size=16).digest()
        size, mtime = (st.st_size, st.st_mtime_ns) if st is not None else (len(content), 0)
        doc = self.documents.get(uri)
        if doc is not None and doc.digest == digest:
            doc.size, doc.mtime_ns = size, mtime
            self.documents.move_to_end(uri)
            return doc
        text = decode(content)
        self._epoch += 1
        if doc is None:
            doc = Document(path, uri, 1, digest, text, split_lines(text), size, mtime)
            self.documents[uri] = doc
            self.client.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id=self.spec.language_id(
                    path), version=1, text=text)))
            self._close_oldest()
            return doc
        doc.version += 1
        doc.digest, doc.text, doc.lines = digest, text, split_lines(text)
        doc.size, doc.mtime_ns = size, mtime
        self.documents.move_to_end(uri)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        log.debug("sent %s version %s", uri, doc.version)
        return doc

    def refresh(self, max_bytes: int, skip: str | None = None) -> None:
        """Re-sync every other open document whose size or mtime changed; close the gone."""
        for uri, doc in list(self.documents.items()):
            if uri == skip:
                continue
            try:
                st = os.stat(doc.path)
            except OSError:
                self.close_document(uri)
                continue
            if (st.st_size, st.st_mtime_ns) == (doc.size, doc.mtime_ns):
                continue
            content = _read(doc.path, st, max_bytes)
            if content is None:
                self.close_document(uri)
                continue
            self.sync(doc.path, content, st)

    def close_document(self, uri: str) -> None:
        if self.documents.pop(uri, None) is not None and self.alive:
            self.client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
        self.client.published.pop(uri, None)

    def _close_oldest(self) -> None:
        while len(self.documents) > MAX_OPEN_DOCUMENTS:
            self.close_document(next(iter(self.documents)))

    # --- diagnostics -------------------------------------------------------------------------

    async def diagnostics(self, doc: Document, wait_s: float, version: int | None = None,
                          until: Callable[[], bool] | None = None
                          ) -> tuple[Published | None, bool]:
        """Wait up to ``wait_s`` for the pushed diagnostics of ``doc``: of its current version
        (or a later one), or, with ``version``, of exactly that version; or until ``until()``
        holds. Returns the freshest report and whether it is the one asked for."""
        exact = version is not None
        wanted = doc.version if version is None else version
        deadline = time.monotonic() + wait_s
        waited = False
        while True:
            found = self.client.published.get(doc.uri)
            got = found.version if found is not None else None
            if got is not None and (got == wanted or (got > wanted and not exact)):
                if waited and not self.client.versioned:
                    return await self._settled(doc, deadline), True
                return found, True
            if got is not None and exact and got > wanted:
                return found, False  # superseded: the server reports on newer content now
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.alive or (until is not None and until()):
                return found, False
            changed = self.client.changed
            waited = True
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except TimeoutError:
                pass

    async def _settled(self, doc: Document, deadline: float) -> Published | None:
        """A server that does not version its reports may send one file's in parts (syntax,
        then semantic): take the last one once it has been quiet for `SETTLE_S`."""
        while True:
            remaining = min(SETTLE_S, deadline - time.monotonic())
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self.client.changed.wait(), remaining)
            except TimeoutError:
                break
        return self.client.published.get(doc.uri)

    async def report(self, doc: Document, wait_s: float, version: int | None = None
                     ) -> tuple[Published | None, bool]:
        """The diagnostics of ``doc`` as it is now (with ``version``: of exactly that version):
        pulled from a server that offers it, else awaited as pushed (`diagnostics`). Returns
        the freshest report and whether it describes the content asked about."""
        deadline = time.monotonic() + wait_s
        if not self.pulls:
            # a server may register pull diagnostics only once it has set up the workspace:
            # the wait for a push ends then too, and the rest of it goes to the pull
            found, fresh = await self.diagnostics(doc, wait_s, version=version,
                                                  until=lambda: self.pulls)
            if fresh or not self.pulls:
                return found, fresh
        wanted = doc.version if version is None else version
        try:
            return await asyncio.wait_for(asyncio.shield(self._pull(doc, wanted)),
                                          max(0.0, deadline - time.monotonic())), True
        except (TimeoutError, ToolError, StillIndexing):
            found = self.client.published.get(doc.uri)
            return found, False

    def _pull(self, doc: Document, version: int) -> asyncio.Future[Published]:
        """The (shared) pull of ``doc``'s diagnostics at ``version``: one request per version,
        however many queries wait for it."""
        key = (version, self._epoch)
        running = self._pulls.get(doc.uri)
        if running is not None and running[0] == key and not (
                running[1].done() and running[1].exception() is not None):
            return running[1]
        future = asyncio.ensure_future(self._pull_once(doc, version))
        self._pulls[doc.uri] = (key, future)
        future.add_done_callback(_consume)
        return future

    async def _pull_once(self, doc: Document, version: int) -> Published:
        params = types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri))
        for attempt in range(PULL_TRIES):
            if not self.alive:
                raise ServerFailed(self.exit_reason())
            try:
                answer = await self._until_exit(
                    self.client.text_document_diagnostic_async(params), 3600)
            except JsonRpcException as exc:
                if exc.code not in (CONTENT_MODIFIED, SERVER_CANCELLED) or \
                        attempt + 1 == PULL_TRIES:
                    raise ToolError("tool_error", f"language server {self.spec.label} answered "
                                    f"textDocument/diagnostic with an error: {exc.message} "
                                    f"(code {exc.code})", "LSP_REQUEST_FAILED",
                                    {"code": exc.code}) from None
                await asyncio.sleep(CONTENT_MODIFIED_PAUSE_S)
                continue
            items = list(getattr(answer, "items", None) or [])
            if getattr(answer, "kind", "full") == "unchanged":  # we never send a result id
                previous = self.client.published.get(doc.uri)
                items = list(previous.diagnostics) if previous is not None else []
            published = Published(version, items)
            self.client.published[doc.uri] = published
            self.client.readiness.heard(evidence=True)
            return published
        raise StillIndexing()

    def settling(self, doc: Document, published: Published | None) -> list[str]:
        """The other files that changed (within `SETTLING_S`) after the server's last report
        on ``doc``: what that report may not include yet, most recent first."""
        since = published.received if published is not None else 0.0
        now = time.monotonic()
        found = [(at, path) for path, at in self.changed_at.items()
                 if path != doc.path and at > since and now - at < SETTLING_S]
        return [path for _at, path in sorted(found, reverse=True)]

    async def until_ready(self, doc: Document, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` until the server has loaded the project (`_readiness`); a
        server that offers pull diagnostics is asked for ``doc``'s on the way (it answers once
        the workspace is set up, which is the sign it gives)."""
        asked: set[int] = set()

        def nudge() -> Any:
            if self.pulls and doc.version not in asked and self.alive:
                asked.add(doc.version)
                return self._wait_quietly(self._pull(doc, doc.version))
            return None

        return await self.client.readiness.wait(timeout_s, nudge)

    @staticmethod
    async def _wait_quietly(future: asyncio.Future[Any]) -> None:
        await asyncio.wait({future})

    # --- files changed on disk -------------------------------------------------------------

    async def files_changed(self, changes: Sequence[Any], max_bytes: int,
                            checks: Mapping[str, asyncio.Task[Any]]) -> None:
        """Tell the server about files that changed on disk (`callgate.files.FileChange`s):
        ``didChangeWatchedFiles`` for those its watchers want, the new content of those it
        has open (after a diagnostics check of that file under way in ``checks``), and, for
        a server whose reports are pushed, every other open document again."""
        async with self._changes:
            if not self.alive:
                return
            now = time.monotonic()
            events: list[types.FileEvent] = []
            reopened: list[tuple[str, str, os.stat_result | None]] = []
            workspace = getattr(self.session, "workspace", None)
            for change in changes:
                path = os.path.realpath(change.path)
                if workspace is not None and not workspace.is_within(path):
                    continue  # a link in the workspace to a file outside: not the project's
                try:
                    st: os.stat_result | None = os.stat(path)
                except OSError:
                    st = None
                told = None if st is None else (st.st_size, st.st_mtime_ns, st.st_ino)
                if path in self._told and self._told[path] == told:
                    continue  # seen already (from the tool, now from the watcher)
                self._remember(path, told)
                kind = "deleted" if st is None else \
                    ("created" if change.kind == "created" else "changed")
                uri = uri_of(path)
                if uri in self.documents:  # the server takes an open file from us, not disk
                    reopened.append((path, uri, st))
                elif self.client.watchers.wants(path, kind):
                    events.append(types.FileEvent(uri=uri, type=EVENT_TYPES[kind][0]))
                    self.changed_at[path] = now
            if events:
                self._epoch += 1
                self.client.workspace_did_change_watched_files(
                    types.DidChangeWatchedFilesParams(changes=events))
            for path, uri, st in reopened:
                pending = checks.get(path)
                if pending is not None and not pending.done():
                    await asyncio.wait({pending}, timeout=CHECK_WAIT_S)
                content = _read(path, st, max_bytes) if st is not None else None
                if content is None:
                    self.close_document(uri)
                else:
                    self.sync(path, content, st)
                self.changed_at[path] = now
            if (events or reopened) and not self.pulls and self.alive:
                self.poke({uri for _path, uri, _st in reopened})
            for path, at in list(self.changed_at.items()):
                if now - at > SETTLING_S:
                    del self.changed_at[path]

    def poke(self, skip: set[str]) -> None:
        """Send every open document but ``skip`` again at a new version: the server re-checks
        it against what changed, and its next report names the version it includes."""
        self._epoch += 1
        for uri, doc in list(self.documents.items()):
            if uri in skip:
                continue
            doc.version += 1
            self.client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri,
                                                                    version=doc.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=doc.text)]))

    def _remember(self, path: str, told: tuple[int, int, int] | None) -> None:
        self._told[path] = told
        self._told.move_to_end(path)
        while len(self._told) > MAX_SIGNATURES:
            self._told.popitem(last=False)

    def describe(self) -> dict[str, Any]:
        return {"language": self.spec.language, "command": self.spec.command, "pid": self.pid,
                "encoding": self.encoding, "confined": self.confined,
                "ready": self.client.readiness.ready}


def _read(path: str, st: os.stat_result | None, max_bytes: int) -> bytes | None:
    """A file's bytes (``None``: too large, or unreadable)."""
    if st is not None and st.st_size > max_bytes:
        return None
    try:
        with open(path, "rb") as fh:
            content = fh.read(max_bytes + 1)
    except OSError:
        return None
    return content if len(content) <= max_bytes else None


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve a shared pull's exception, so a pull nobody awaits any more logs nothing."""
    if not future.cancelled():
        future.exception()
