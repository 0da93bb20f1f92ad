"""What the four tools do (``lsp_definition``, ``lsp_references``, ``lsp_hover``,
``lsp_diagnostics``), imported on their first call (`tools.lsp` registers them).

Each one confines its ``file`` like every file tool, reads it (the read is not
an observation: it does not let a later edit skip ``read_file``), finds the
symbol among the code tokens of the named line (`_syntax`), and asks the session's
server for that language on its loop thread. Results are plain text; failures are
structured errors with stable ``LSP_*`` signatures.

An answer from a server that has not loaded the project yet says so (`_readiness`);
``lsp_references`` first waits for it (``[lsp] references_wait_ms``) when the workspace is
small. ``lsp_diagnostics`` lists errors and warnings unless ``severity`` says otherwise, and
names the changed files its report may not include yet.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Callable, Coroutine
from typing import Any

import attrs
from callgate import ToolContext, ToolError, ToolResult
from lsprotocol import types

from . import _render, _syntax
from ._manager import RETRY_AFTER_FAILED_START_S, Cancelled, LspManager
from ._positions import to_units
from ._server import Document, Server, ServerFailed, StillIndexing, decode
from ._table import ServerSpec, extension_of
from .tools.lsp import EXTENSION


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


def symbol_column(target: Target, line: int, symbol: str, column: int | None = None) -> int:
    """The code-point column of ``symbol`` among the code tokens of 1-based ``line``
    (`_syntax`): `not_found` when it is not there (or only in strings and comments),
    `invalid_arguments` when it is code there more than once and ``column`` does not say
    which."""
    if line > len(target.lines):
        raise ToolError("not_found", f"LSP_NO_SUCH_LINE: {target.display} has "
                        f"{len(target.lines)} line(s); there is no line {line}",
                        "LSP_NO_SUCH_LINE")
    text = target.lines[line - 1]
    shown = _render.clip(text.strip(), 200)
    try:
        found = _syntax.candidates(extension_of(target.path), decode(target.content),
                                   line - 1, symbol)
        chosen = _syntax.choose(found, column)
    except _syntax.OnlyInText:
        raise ToolError("not_found", f'LSP_SYMBOL_NOT_IN_CODE: "{symbol}" occurs on line {line} '
                        f"of {target.display} only inside a string or a comment, which reads: "
                        f"{shown!r}; name a symbol of the code", "LSP_SYMBOL_NOT_IN_CODE"
                        ) from None
    except _syntax.Ambiguous as exc:
        columns = [c.start + 1 for c in exc.candidates]
        listed = ", ".join(f"{c} ({_render.clip(text[c - 1:].strip(), 40)!r})" for c in columns)
        raise ToolError("invalid_arguments", f'LSP_SYMBOL_AMBIGUOUS: "{symbol}" is code '
                        f"{len(columns)} times on line {line} of {target.display}, at columns "
                        f"{listed}; call again with column set to the one you mean",
                        "LSP_SYMBOL_AMBIGUOUS", {"columns": columns}) from None
    if chosen is None and found and column is not None:
        columns = [c.start + 1 for c in found]
        raise ToolError("invalid_arguments", f'LSP_SYMBOL_NOT_AT_COLUMN: "{symbol}" is not at '
                        f"column {column} of line {line} of {target.display}; it is at column"
                        f"{'s' if len(columns) > 1 else ''} "
                        f"{', '.join(map(str, columns))}", "LSP_SYMBOL_NOT_AT_COLUMN",
                        {"columns": columns})
    if chosen is None:
        raise ToolError("not_found", f'LSP_SYMBOL_NOT_ON_LINE: "{symbol}" does not occur on '
                        f"line {line} of {target.display}, which reads: {shown!r}",
                        "LSP_SYMBOL_NOT_ON_LINE")
    return chosen.column


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


def _with_note(text: str, note: str | None, server: Server, loading: bool = False) -> str:
    """``text`` with what the model must know about it: the server had not loaded the project
    (``loading``, or it is loading or indexing now), the server was restarted (``note``)."""
    extra = []
    if loading or server.indexing:
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
        column = symbol_column(target, line, symbol, args.get("column"))
        timeout = _timeout(ctx)
        wait_s = int(ctx.config.get("references_wait_ms", 10000)) / 1000
        unready: list[bool] = []

        async def work(server: Server) -> Any:
            doc = _sync(server, target, max_bytes)
            character = to_units(doc.lines[line - 1], column, server.encoding)
            where = {"text_document": types.TextDocumentIdentifier(uri=doc.uri),
                     "position": types.Position(line=line - 1, character=character)}
            client = server.client
            if kind == "definition":
                params = types.DefinitionParams(**where)
                unready.append(server.indexing)
                answer = await server.request("textDocument/definition", lambda:
                                              client.text_document_definition_async(params),
                                              timeout)
                unready.append(server.indexing)
                return answer
            # references search the whole project: an answer before it is loaded lists what
            # the server has seen so far (often the declaration alone)
            if not server.readiness.ready and wait_s > 0 and await mgr.small_workspace(spec):
                await server.until_ready(doc, wait_s)
            unready.append(not server.readiness.ready)  # checked when sent: see _readiness
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
        loading = any(unready)
        return ToolResult.ok(_with_note(text, note, server, loading),
                             {"count": len(found), "server": spec.command,
                              "encoding": server.encoding, "loading": loading})

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
    column = symbol_column(target, line, symbol, args.get("column"))
    timeout = _timeout(ctx)
    unready: list[bool] = []

    async def work(server: Server) -> Any:
        doc = _sync(server, target, max_bytes)
        character = to_units(doc.lines[line - 1], column, server.encoding)
        params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc.uri),
                                   position=types.Position(line=line - 1, character=character))
        unready.append(server.indexing)
        answer = await server.request("textDocument/hover", lambda:
                                      server.client.text_document_hover_async(params), timeout)
        unready.append(server.indexing)
        return answer

    try:
        hover, server, note = await on_server(mgr, spec, work)
    except StillIndexing:
        return _indexing(spec)
    text = _render.hover_text(hover)
    if not text:
        text = f'no hover information for "{symbol}" at {target.display}:{line}'
    loading = any(unready)
    return ToolResult.ok(_with_note(text, note, server, loading),
                         {"server": spec.command, "loading": loading})


# --- diagnostics ------------------------------------------------------------------------------


#: ``severity`` -> the LSP severities it lists (1 error, 2 warning, 3 information, 4 hint)
SEVERITY_LEVELS = {"errors": 1, "warnings": 2, "all": 4}


async def diagnostics_body(ctx: ToolContext, args: dict[str, Any], mgr: LspManager
                           ) -> ToolResult:
    max_bytes = _max_bytes(ctx)
    target = read_target(ctx, args["file"], max_bytes)
    spec = mgr.table.require(target.path, target.display)
    wait_s = int(ctx.config.get("diagnostics_wait_ms", 2000)) / 1000
    severity = args.get("severity") or "warnings"
    level = SEVERITY_LEVELS[severity]

    async def work(server: Server) -> tuple[Any, bool, Document, list[str]]:
        doc = _sync(server, target, max_bytes)
        found, fresh = await server.report(doc, wait_s)
        return found, fresh, doc, (server.settling(doc, found) if not fresh else [])

    (published, fresh, doc, settling), server, note = await on_server(mgr, spec, work)
    every = _render.sorted_diagnostics(published.diagnostics if published else [])
    found = [d for d in every if int(d.severity or 1) <= level]
    hidden = len(every) - len(found)
    limit = int(ctx.config.get("max_results", 100))
    if not found:
        text = f"no diagnostics for {target.display}"
    else:
        lines = [_render.diagnostic_line(d, doc.lines, server.encoding) for d in found[:limit]]
        if len(found) > limit:
            lines.append(f"… and {len(found) - limit} more")
        text = "\n".join([f"{len(found)} diagnostic(s) in {target.display}:", *lines])
    if hidden:
        what = "warning(s), information and hint(s)" if severity == "errors" else \
            "information and hint(s)"
        text += f"\n({hidden} {what} not listed; severity=\"all\" lists them)"
    if settling:
        names = [ctx.workspace.relative(p) for p in settling[:5]]
        more = f" and {len(settling) - 5} more" if len(settling) > 5 else ""
        text += (f"\n\n(may still be settling: {', '.join(names)}{more} changed, and "
                 f"{spec.label} has not reported on {target.display} since; call again "
                 "shortly)")
    elif not fresh and published is not None:
        text += (f"\n\n({spec.label} had not finished checking the current contents within "
                 f"{wait_s:g} s; this is its last report)")
    elif not fresh:
        text += (f"\n\n({spec.label} sent no report within {wait_s:g} s; call again to "
                 "check)")
    return ToolResult.ok(_with_note(text, note, server),
                         {"count": len(found), "hidden": hidden, "fresh": fresh,
                          "settling": [ctx.workspace.relative(p) for p in settling],
                          "server": spec.command})


#: The ``execute`` of each tool (`tools.lsp` registers wrappers that import this module on use).
EXECUTE = {
    "lsp_definition": lsp_tool(_navigate("definition")),
    "lsp_references": lsp_tool(_navigate("references")),
    "lsp_hover": lsp_tool(hover_body),
    "lsp_diagnostics": lsp_tool(diagnostics_body),
}
