"""The ``web_fetch`` tool: schema, description, execute, and the result it shapes.

`WebFetch` is the tool with its network; the plugin (`callgate_web.plugin.WebPlugin`)
is one. The entry point registers a default instance (system resolver, a real
transport); tests and integrators register their own with an injected ``resolver``
and ``transport`` (web-and-media.md §3).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from callgate import (
    Decision,
    PermissionSubject,
    ToolCall,
    ToolContext,
    ToolError,
    ToolResult,
    ToolSpec,
    Violation,
)

from .. import _content, _guard
from .._url import BadURL, Target, parse, rule_forms, shorten

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
WEB_FETCH_KNOWN_AS = ("WebFetch", "fetch", "curl", "browse", "open_url", "read_url", "url_fetch")

if TYPE_CHECKING:  # httpx, ssl, bs4, markdownify load on the first fetch, not at registration
    import ssl

    import httpx

    from .._fetch import Fetched, TransportSource

__version__ = "0.1.0"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "minLength": 1,
            "maxLength": 2048,
            "description": "Absolute http:// or https:// URL to fetch.",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Fetch one http:// or https:// URL and return its content as text. HTML pages come back "
    "as readable markdown (title, headings, lists, code blocks, tables, absolute links); JSON, "
    "plain text and markdown come back exactly as served. The first line reports the HTTP "
    "status, media type and byte count; non-2xx statuses are results, not errors. Use it for "
    "documentation pages, API responses or source files that are not in the local workspace. "
    "Binary bodies (images, archives, PDFs) are refused. Private, link-local and other "
    "non-public addresses are refused, as are credentials in the URL. Long pages are truncated "
    "in the reply but kept whole for paging."
)

def check_url(ctx: ToolContext, arguments: Mapping[str, Any]) -> list[Violation]:
    """The plugin validator: a URL web_fetch would never fetch is an invalid argument."""
    url = arguments.get("url")
    if not isinstance(url, str):
        return []
    try:
        parse(url)
    except BadURL as exc:
        return [Violation("/url", "format", str(exc))]
    return []


class WebFetch:
    """The ``web_fetch`` tool with its network: `spec` is the tool, `execute` runs it.

    ``resolver(host) -> list of IP strings`` replaces the system resolver
    (``[web] resolve`` is still asked first). ``transport`` is an
    ``httpx.AsyncBaseTransport``, or a factory called per fetch with the TLS
    context built from ``[web]`` (so ``ca_bundle`` still applies) that returns one.
    """

    def __init__(self, resolver: _guard.Resolver | None = None,
                 transport: TransportSource = None) -> None:
        self.resolver = resolver
        self.transport = transport
        self._tls_lock = threading.Lock()
        self._tls: dict[tuple[str | None, float | None], ssl.SSLContext] = {}

    def spec(self) -> ToolSpec:
        return ToolSpec(
            runs_at="host",
            name="web_fetch", known_as=WEB_FETCH_KNOWN_AS,
            open_world=True,
            description=DESCRIPTION,
            schema=SCHEMA,
            execute=self.execute,
            read_only=True,
            visibility="hidden",
            validate=check_url,
            permission_subject=PermissionSubject("url", ("url",), forms=rule_forms),
        )

    # --- execute ---------------------------------------------------------------------

    async def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        from .._fetch import Fetcher, Settings

        url: str = args["url"]
        config = ctx.config
        settings = Settings.from_config(config, f"callgate-web-fetch/{__version__}")
        tls = self.tls_context(config.get("ca_bundle"), ctx.host)
        transport, owned = self._transport(tls)
        try:
            fetcher = Fetcher(settings, self.resolver, transport, ctx.cancelled,
                              check_hop=hop_check(ctx, url))
            fetched = await fetcher.fetch(url, _wanted)
        finally:
            if owned:
                await transport.aclose()
        import anyio  # here: importing anyio reads its own source (~10% of a cold start)

        return await anyio.to_thread.run_sync(present, fetched, settings.max_bytes)

    def _transport(self, tls: ssl.SSLContext) -> tuple[httpx.AsyncBaseTransport, bool]:
        import httpx

        given = self.transport
        if given is None:
            return httpx.AsyncHTTPTransport(
                verify=tls, trust_env=False, retries=0,
                limits=httpx.Limits(max_keepalive_connections=0)), True
        if isinstance(given, httpx.AsyncBaseTransport):
            return given, False
        return given(tls), True

    def tls_context(self, ca_bundle: str | None, host: Any) -> ssl.SSLContext:
        """The default CA bundle plus ``[web] ca_bundle`` (cached until that file changes)."""
        path = _config_path(ca_bundle, host) if ca_bundle else None
        try:
            mtime = os.stat(path).st_mtime if path else None
        except OSError as exc:
            raise _bad_bundle(ca_bundle, exc.strerror or str(exc)) from None
        key = (path, mtime)
        with self._tls_lock:
            found = self._tls.get(key)
            if found is None:
                import ssl

                import httpx

                found = httpx.create_ssl_context(verify=True, trust_env=False)
                if path:
                    try:
                        found.load_verify_locations(cafile=path)
                    except (OSError, ssl.SSLError) as exc:
                        raise _bad_bundle(ca_bundle, str(exc)) from None
                self._tls = {key: found}
            return found


def _decision(ctx: ToolContext, url: str) -> tuple[str, Decision] | None:
    """The permission decision the pipeline would make for a web_fetch of ``url`` (every
    ``callgate_check_permission`` hook, the rules included: deny over ask over allow);
    ``None`` when none speaks (the read-only fallback: allowed)."""
    name = ctx.tool.permission_name
    call = ToolCall(ctx.call.id, name, {"url": url})
    found = ctx.session.permission_decision(call, ctx.tool)
    return (found.source or "", found) if found is not None else None


def hop_check(ctx: ToolContext, url: str) -> Callable[[Target], None]:
    """Judge each redirect target as the pipeline judged the URL the model asked for.

    A hop that a direct call would find denied is refused; one that would need an
    approval is refused too (the model can ask for it by fetching that URL), unless it
    stays on the host the call was approved for under the same rule.
    """
    first = _decision(ctx, url)
    first_host = _host_of(url)

    def check(target: Target) -> None:
        found = _decision(ctx, target.url)
        if found is None or found[1].action == "allow":
            return
        plugin, decision = found
        rule = decision.rule or f"hook:{plugin}"
        shown = shorten(target.url)
        if decision.action == "deny":
            why = f"rule {decision.rule}" if decision.rule else plugin
            raise ToolError("blocked", f"blocked: {shorten(url)} redirected to {shown}, which "
                            f"{why} denies; nothing was fetched from it",
                            f"deny:{rule}", {"redirect": target.url, "executed": False})
        same_approval = first is not None and first[1].action == "ask" and \
            (first[0], first[1].rule) == (plugin, decision.rule)
        if same_approval and _host_of(target.url) == first_host:
            return  # approved for this host under this very rule
        raise ToolError("blocked", f"blocked: {shorten(url)} redirected to {shown}, which needs "
                        f"its own approval ({rule}); call web_fetch with that URL to ask for "
                        "it", f"ask:{rule}", {"redirect": target.url, "executed": False})

    return check


def _host_of(url: str) -> str | None:
    forms = rule_forms(url)
    if not forms:
        return None
    return forms[0].partition("://")[2].partition("/")[0]


def _config_path(value: str, host: Any) -> str:
    """A config path: relative ones are taken from the config file's directory."""
    path = os.path.expanduser(value)
    source = host.config_file("web", "ca_bundle")  # the file of the layer that set it
    if not os.path.isabs(path) and source and os.path.isfile(source):
        path = os.path.join(os.path.dirname(os.path.abspath(source)), path)
    return os.path.abspath(path)


def _bad_bundle(value: str | None, reason: str) -> ToolError:
    return ToolError("tool_error", f"[web] ca_bundle {value} cannot be loaded ({reason}); fix "
                     "the path in the config or remove the key", "WEB_CONFIG")


def _wanted(content_type: str) -> bool:
    media_type, _ = _content.split_content_type(content_type)
    return _content.kind_from_type(media_type) is not None


def _unsupported(media_type: str, n: int) -> ToolError:
    shown = media_type or "(none)"
    return ToolError("tool_error", f"unsupported media type {shown} ({n} bytes read): web_fetch "
                     "returns text only", "WEB_MEDIA_TYPE", {"media_type": shown})


def header(fetched: Fetched, media_type: str, max_bytes: int) -> str:
    """``status <code> <reason> · <media type> · <n> bytes`` and the cut/redirect notes."""
    try:  # the standard phrase, whatever case or wording the server used
        reason = HTTPStatus(fetched.status).phrase
    except ValueError:
        reason = fetched.reason
    status = f"status {fetched.status} {reason}".rstrip()
    parts = [status, media_type or "no content type", f"{len(fetched.body)} bytes"]
    if fetched.cut:
        parts.append(f"cut at {max_bytes} bytes")
    if fetched.redirected:
        parts.append(f"redirected to {fetched.url}")
    return " · ".join(parts)


def present(fetched: Fetched, max_bytes: int) -> ToolResult:
    """The result the model reads: the header line, a blank line, the text (blocking)."""
    media_type, charset = _content.split_content_type(fetched.content_type)
    if fetched.refused_type:
        raise _unsupported(media_type, 0)
    kind = _content.kind_from_type(media_type)
    if kind == "sniff":
        kind = _content.sniff(media_type, fetched.body)
    if kind is None:
        raise _unsupported(media_type, len(fetched.body))
    text = _content.decode(fetched.body, charset, kind, fetched.cut)
    if kind == "html":
        from .. import _html

        text = _html.render(text, fetched.url)
    meta = {"status": fetched.status, "media_type": media_type or None,
            "bytes": len(fetched.body), "cut": fetched.cut, "final_url": fetched.url}
    return ToolResult.ok(f"{header(fetched, media_type, max_bytes)}\n\n{text or '(empty body)'}",
                         meta)
