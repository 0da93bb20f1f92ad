"""A real LSP server (pygls over stdio) whose misbehaviour the lifecycle tests choose.

The Python and TypeScript servers cover what a language server answers; this one covers what
the client must survive, deterministically: a request that never returns (so the test can
``kill -9`` the server mid-query), a flood of stderr, ``ContentModified`` answers, an
``initialize`` that never comes back, and a child process that must die with the group.

Behaviour comes from the environment: ``SCRIPTED_DIR`` (where it records ``started-<pid>``
and ``child-<pid>``) and ``SCRIPTED_MODES`` (comma-separated: ``mute``, ``hang_hover``,
``stderr_flood``, ``modified:<n>``, ``child``, ``silent``: no diagnostics, ``once``: only the
first report of each file, ``register_watchers``: register file watchers for ``**/*.scr``
(create, change) and ``**/settings.cfg`` (all), then record ``registered``). ``definition``
answers line 1 of the queried file; ``hover`` answers the queried position; diagnostics are
one warning per ``TODO``. Every ``workspace/didChangeWatchedFiles`` is appended to
``watched.jsonl`` (one line per notification: ``[{path, type}]``, paths relative to the root).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

DIR = os.environ.get("SCRIPTED_DIR", ".")
MODES = set(filter(None, os.environ.get("SCRIPTED_MODES", "").split(",")))


def _record(name: str) -> None:
    with open(os.path.join(DIR, name), "w") as fh:
        fh.write(str(os.getpid()))


if __name__ == "__main__":  # before the (slow) imports, so a test sees the start at once
    _record(f"started-{os.getpid()}")
    if "mute" in MODES:  # never answers anything, initialize included
        time.sleep(3600)

from lsprotocol import types  # noqa: E402
from pygls import uris  # noqa: E402
from pygls.exceptions import JsonRpcContentModified  # noqa: E402
from pygls.lsp.server import LanguageServer  # noqa: E402

server = LanguageServer("scripted-server", "1.0")
state = {"modified": next((int(m.split(":")[1]) for m in MODES if m.startswith("modified:")),
                          0)}


@server.feature(types.INITIALIZED)
async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
    if "register_watchers" in MODES:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(id="scripted-watchers",
                               method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                               register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                   watchers=[types.FileSystemWatcher(glob_pattern="**/*.scr",
                                                                     kind=3),
                                             types.FileSystemWatcher(
                                                 glob_pattern="**/settings.cfg")]))]))
        _record("registered")
    if "stderr_flood" in MODES:
        line = b"SECRET-STDERR " * 64 + b"\n"
        for _ in range(400):  # ~360 KB: more than a pipe holds, so it must be drained
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
    if "child" in MODES:
        child = subprocess.Popen(["sleep", "3600"])
        with open(os.path.join(DIR, f"child-{child.pid}"), "w") as fh:
            fh.write(str(child.pid))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: types.DefinitionParams) -> types.Location:
    if state["modified"] > 0:
        state["modified"] -= 1
        raise JsonRpcContentModified()
    return types.Location(uri=params.text_document.uri, range=types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover:
    if "hang_hover" in MODES:
        _record(f"hovering-{os.getpid()}")
        await asyncio.sleep(3600)
    pos = params.position
    return types.Hover(contents=types.MarkupContent(
        kind=types.MarkupKind.PlainText, value=f"line {pos.line} character {pos.character}"))


_reported: set[str] = set()


def _publish(ls: LanguageServer, uri: str, version: int) -> None:
    if "silent" in MODES or ("once" in MODES and uri in _reported):
        return
    _reported.add(uri)
    doc = ls.workspace.get_text_document(uri)
    found = [types.Diagnostic(
        range=types.Range(start=types.Position(line=i, character=line.index("TODO")),
                          end=types.Position(line=i, character=line.index("TODO") + 4)),
        message="a TODO is left", severity=types.DiagnosticSeverity.Warning, source="scripted")
        for i, line in enumerate(doc.lines) if "TODO" in line]
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, version=version, diagnostics=found))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: LanguageServer,
                             params: types.DidChangeWatchedFilesParams) -> None:
    root = ls.workspace.root_path or ""
    events = [{"path": os.path.relpath(uris.to_fs_path(c.uri) or "", root), "type": int(c.type)}
              for c in params.changes]
    with open(os.path.join(DIR, "watched.jsonl"), "a") as fh:
        fh.write(json.dumps(events) + "\n")


if __name__ == "__main__":
    server.start_io()
