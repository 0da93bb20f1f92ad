"""The four tools: ``lsp_definition``, ``lsp_references``, ``lsp_hover``, ``lsp_diagnostics``.

Each one confines its ``file`` like every file tool, reads it (the read is not
an observation: it does not let a later edit skip ``read_file``), finds the
symbol's column on the named line, and asks the session's server for that
language on its loop thread. Results are plain text; failures are structured
errors with stable ``LSP_*`` signatures.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Callable, Coroutine
from typing import Any

import attrs
from callgate import ToolContext, ToolError, ToolResult
from lsprotocol import types

from . import _render
from ._manager import RETRY_AFTER_FAILED_START_S, Cancelled, LspManager
from ._positions import find_symbol, to_units
from ._server import Document, Server, ServerFailed, StillIndexing, decode
from ._specs import EXTENSION
from ._table import ServerSpec


@attrs.frozen
class Target:
    """The file a query is about, as read now."""

    path: str
    display: str
    content: bytes
    stat: os.stat_result
    lines: list[str]


def manager_of(ctx: ToolContext) -> LspManager:
    return ctx.session.extension(EXTENSION)


def read_target(ctx: ToolContext, file: str, max_bytes: int) -> Target:
    """Confine, stat and read ``file`` (a regular text file of at most ``max_bytes``)."""
    resolved = ctx.workspace.resolve(file)
    shown = resolved.display
    try:
        st = os.stat(resolved.path)
    except FileNotFoundError:
        raise ToolError("not_found", f"LSP_NOT_FOUND: {shown} does not exist",
                        "LSP_NOT_FOUND") from None
    except OSError as exc:
        raise ToolError("tool_error", f"LSP_IO: {shown} cannot be read ({exc.strerror})",
                        "LSP_IO") from None
    if stat_mod.S_ISDIR(st.st_mode):
        raise ToolError("tool_error", f"LSP_IS_DIRECTORY: {shown} is a directory; name a "
                        "source file", "LSP_IS_DIRECTORY")
    if not stat_mod.S_ISREG(st.st_mode):
        raise ToolError("tool_error", f"LSP_NOT_REGULAR: {shown} is not a regular file",
                        "LSP_NOT_REGULAR")
    if st.st_size > max_bytes:
        raise ToolError("tool_error", f"LSP_TOO_LARGE: {shown} has {st.st_size} bytes, more "
                        f"than [lsp] max_file_bytes ({max_bytes})", "LSP_TOO_LARGE")
    try:
        with open(resolved.path, "rb") as fh:
            content = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ToolError("tool_error", f"LSP_IO: {shown} cannot be read ({exc.strerror})",
                        "LSP_IO") from None
    if b"\x00" in content[:8192]:
        raise ToolError("tool_error", f"LSP_BINARY: {shown} is a binary file",
                        "LSP_BINARY")
    from ._positions import split_lines

    return Target(resolved.path, shown, content, st, split_lines(decode(content)))


def symbol_column(target: Target, line: int, symbol: str) -> int:
    """The code-point column of ``symbol`` on 1-based ``line``, or a `not_found` error."""
    if line > len(target.lines):
        raise ToolError("not_found", f"LSP_NO_SUCH_LINE: {target.display} has "
                        f"{len(target.lines)} line(s); there is no line {line}",
                        "LSP_NO_SUCH_LINE")
    text = target.lines[line - 1]
    column = find_symbol(text, symbol)
    if column is None:
        shown = _render.clip(text.strip(), 200)
        raise ToolError("not_found", f'LSP_SYMBOL_NOT_ON_LINE: "{symbol}" does not occur on '
                        f"line {line} of {target.display}, which reads: {shown!r}",
                        "LSP_SYMBOL_NOT_ON_LINE")
    return column


def failed(spec: ServerSpec, exc: ServerFailed) -> ToolError:
    when = "during the query" if exc.during else "while starting"
    again = (f"a query after {RETRY_AFTER_FAILED_START_S:g} s starts it again" if exc.hung
             else "it is started again on the next query")
    return ToolError("tool_error", f"language server {spec.label} {exc.reason} {when}; {again}",
                     "LSP_SERVER_FAILED", {"language": spec.language})


async def on_server(mgr: LspManager, spec: ServerSpec,
                    work: Callable[[Server], Coroutine[Any, Any, Any]]
                    ) -> tuple[Any, Server, str | None]:
    """``work(server)`` on the live server of ``spec``: ``(answer, server, restart note)``;
    a server that fails to start or dies meanwhile is a `ToolError`."""
    try:
        server, note = await mgr.server(spec)
    except ServerFailed as exc:
        raise failed(spec, exc) from None
    try:
        return await work(server), server, note
    except ServerFailed as exc:
        server.kill()  # its children too; the next query starts a new one
        exc.during = True
        raise failed(spec, exc) from None


def lsp_tool(body: Callable[[ToolContext, dict[str, Any], LspManager],
                            Coroutine[Any, Any, ToolResult]]
             ) -> Callable[[ToolContext, dict[str, Any]], Coroutine[Any, Any, ToolResult]]:
    """An ``execute`` that runs ``body`` on the session's LSP loop thread (reading the file
    there too): the session's loop only waits, and no worker thread is needed."""

    async def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        mgr = manager_of(ctx)
        try:
            return await mgr.call(body(ctx, args, mgr), ctx.cancelled)
        except Cancelled:
            raise ToolError("cancelled", "cancelled while the language server was answering",
                            "cancelled") from None

    return execute


def _timeout(ctx: ToolContext) -> float:
    return float(ctx.config.get("request_timeout_s", 30))


def _max_bytes(ctx: ToolContext) -> int:
    return int(ctx.config.get("max_file_bytes", 2 * 1024 * 1024))


def _with_note(text: str, note: str | None, server: Server) -> str:
    extra = []
    if server.indexing:
        extra.append(f"({server.spec.label} is still loading or indexing the project; this "
                     "answer may be incomplete: retry shortly)")
    if note:
        extra.append(note)
    return "\n\n".join([text, *extra])


def _indexing(spec: ServerSpec) -> ToolResult:
    return ToolResult.ok(f"{spec.label} is still indexing (it answered 'content modified' "
                         "several times); retry shortly", {"indexing": True})


# --- definition and references --------------------------------------------------------------


def _navigate(kind: str) -> Callable[[ToolContext, dict[str, Any], LspManager],
                                      Coroutine[Any, Any, ToolResult]]:
    async def body(ctx: ToolContext, args: dict[str, Any], mgr: LspManager) -> ToolResult:
        max_bytes = _max_bytes(ctx)
        target = read_target(ctx, args["file"], max_bytes)
        spec = mgr.table.require(target.path, target.display)
        line, symbol = args["line"], args["symbol"]
        column = symbol_column(target, line, symbol)
        timeout = _timeout(ctx)

        async def work(server: Server) -> Any:
            doc = _sync(server, target, max_bytes)
            character = to_units(doc.lines[line - 1], column, server.encoding)
            where = {"text_document": types.TextDocumentIdentifier(uri=doc.uri),
                     "position": types.Position(line=line - 1, character=character)}
            client = server.client
            if kind == "definition":
                params = types.DefinitionParams(**where)
                return await server.request("textDocument/definition", lambda:
                                            client.text_document_definition_async(params),
                                            timeout)
            refs = types.ReferenceParams(
                **where, context=types.ReferenceContext(include_declaration=True))
            return await server.request("textDocument/references", lambda:
                                        client.text_document_references_async(refs), timeout)

        try:
            answer, server, note = await on_server(mgr, spec, work)
        except StillIndexing:
            return _indexing(spec)
        found = _render.places(answer)
        shower = _shower(ctx, server, target)
        if kind == "references":
            found = _render.sort_references(found, shower)
        noun = "definition" if kind == "definition" else "reference"
        limit = int(ctx.config.get("max_results", 100))
        if not found:
            text = f'no {noun}s found for "{symbol}" at {target.display}:{line}'
        else:
            text = "\n".join([f"{len(found)} {noun}(s):",
                              *_render.location_lines(found, shower, limit)])
        return ToolResult.ok(_with_note(text, note, server),
                             {"count": len(found), "server": spec.command,
                              "encoding": server.encoding})

    return body


def _sync(server: Server, target: Target, max_bytes: int) -> Document:
    doc = server.sync(target.path, target.content, target.stat)
    server.refresh(max_bytes, skip=doc.uri)
    return doc


def _shower(ctx: ToolContext, server: Server, target: Target) -> _render.Shower:
    workspace = ctx.workspace

    def display(path: str) -> str:
        return workspace.relative(os.path.realpath(path))

    known = {doc.path: doc.lines for doc in server.documents.values()}  # what the server has
    known[target.path] = target.lines
    return _render.Shower(display, workspace.is_within, known)


# --- hover ------------------------------------------------------------------------------------


async def hover_body(ctx: ToolContext, args: dict[str, Any], mgr: LspManager) -> ToolResult:
    max_bytes = _max_bytes(ctx)
    target = read_target(ctx, args["file"], max_bytes)
    spec = mgr.table.require(target.path, target.display)
    line, symbol = args["line"], args["symbol"]
    column = symbol_column(target, line, symbol)
    timeout = _timeout(ctx)

    async def work(server: Server) -> Any:
        doc = _sync(server, target, max_bytes)
        character = to_units(doc.lines[line - 1], column, server.encoding)
        params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc.uri),
                                   position=types.Position(line=line - 1, character=character))
        return await server.request("textDocument/hover", lambda:
                                    server.client.text_document_hover_async(params), timeout)

    try:
        hover, server, note = await on_server(mgr, spec, work)
    except StillIndexing:
        return _indexing(spec)
    text = _render.hover_text(hover)
    if not text:
        text = f'no hover information for "{symbol}" at {target.display}:{line}'
    return ToolResult.ok(_with_note(text, note, server), {"server": spec.command})


# --- diagnostics ------------------------------------------------------------------------------


async def diagnostics_body(ctx: ToolContext, args: dict[str, Any], mgr: LspManager
                           ) -> ToolResult:
    max_bytes = _max_bytes(ctx)
    target = read_target(ctx, args["file"], max_bytes)
    spec = mgr.table.require(target.path, target.display)
    wait_s = int(ctx.config.get("diagnostics_wait_ms", 2000)) / 1000

    async def work(server: Server) -> tuple[Any, bool, Document]:
        doc = _sync(server, target, max_bytes)
        found, fresh = await server.diagnostics(doc, wait_s)
        return found, fresh, doc

    (published, fresh, doc), server, note = await on_server(mgr, spec, work)
    found = _render.sorted_diagnostics(published.diagnostics if published else [])
    limit = int(ctx.config.get("max_results", 100))
    if not found:
        text = f"no diagnostics for {target.display}"
    else:
        lines = [_render.diagnostic_line(d, doc.lines, server.encoding) for d in found[:limit]]
        if len(found) > limit:
            lines.append(f"… and {len(found) - limit} more")
        text = "\n".join([f"{len(found)} diagnostic(s) in {target.display}:", *lines])
    if not fresh and published is not None:
        text += (f"\n\n({spec.label} had not finished checking the current contents within "
                 f"{wait_s:g} s; this is its last report)")
    elif not fresh:
        text += (f"\n\n({spec.label} sent no report within {wait_s:g} s; call again to "
                 "check)")
    return ToolResult.ok(_with_note(text, note, server),
                         {"count": len(found), "fresh": fresh, "server": spec.command})


#: The ``execute`` of each tool (`_specs` registers wrappers that import this module on use).
EXECUTE = {
    "lsp_definition": lsp_tool(_navigate("definition")),
    "lsp_references": lsp_tool(_navigate("references")),
    "lsp_hover": lsp_tool(hover_body),
    "lsp_diagnostics": lsp_tool(diagnostics_body),
}
