"""One web_fetch call on the wire: hops, the guard per hop, redirects, a capped body.

httpx's transport is used directly (no client): there is no cookie jar, no
``.netrc``, no environment proxy, and redirects are ours to follow, so every
hop is judged by the permission rules (``check_hop``, before it is looked up),
looked up once, judged by the guard and connected to the address that was
judged. The original host travels in the ``Host`` header and as the TLS
server name, so certificates are still verified against it.
"""

from __future__ import annotations

import ssl
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urljoin

import anyio
import attrs
import httpx
from callgate import ToolError

from . import _guard
from ._url import BadURL, IPAddress, Target, parse, shorten

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5"

TransportSource = (httpx.AsyncBaseTransport
                   | Callable[[ssl.SSLContext], httpx.AsyncBaseTransport] | None)


@attrs.frozen
class Settings:
    """The ``[web]`` table as one fetch uses it."""

    timeout_s: float
    connect_timeout_s: float
    max_bytes: int
    max_redirects: int
    allow_loopback: bool
    resolve: Mapping[str, Sequence[str]]
    user_agent: str

    @classmethod
    def from_config(cls, config: Mapping[str, Any], user_agent: str) -> Settings:
        return cls(timeout_s=config["timeout_s"], connect_timeout_s=config["connect_timeout_s"],
                   max_bytes=config["max_bytes"], max_redirects=config["max_redirects"],
                   allow_loopback=config["allow_loopback"],
                   resolve={k.lower(): v for k, v in config["resolve"].items()},
                   user_agent=user_agent)


@attrs.define
class Fetched:
    """The final response of a fetch: its status line, headers and the body read."""

    status: int
    reason: str
    content_type: str | None
    body: bytes
    cut: bool
    url: str
    redirected: bool
    refused_type: bool = False


def seconds(value: float) -> str:
    return f"{value:g}"


class _Body:
    """Decodes ``Content-Encoding`` (gzip, deflate) incrementally, never past a byte budget,
    so a compression bomb is stopped after ``limit`` output bytes."""

    def __init__(self, encoding: str, target: Target) -> None:
        tokens = [t.strip().lower() for t in encoding.split(",") if t.strip()]
        tokens = [t for t in tokens if t != "identity"]
        self._target = target
        self._mode = tokens[0] if tokens else "identity"
        if len(tokens) > 1 or self._mode not in ("identity", "gzip", "x-gzip", "deflate"):
            raise ToolError("tool_error", f"fetch {shorten(target.url)}: the server sent a body "
                            f"in an unsupported content encoding ({encoding}); web_fetch decodes "
                            "gzip and deflate", "WEB_CONTENT_ENCODING")
        self._first = True
        self._done = False
        self._inflate: Any = self._new()

    def _new(self) -> Any:
        if self._mode in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        if self._mode == "deflate":
            return zlib.decompressobj(zlib.MAX_WBITS)
        return None

    def feed(self, data: bytes, budget: int) -> bytes:
        """At most ``budget`` decoded bytes from ``data`` (the rest is not needed)."""
        if self._inflate is None:
            return data[:budget]
        if self._done:
            return b""
        out = bytearray()
        try:
            while data and len(out) < budget:
                try:
                    piece = self._inflate.decompress(data, budget - len(out))
                except zlib.error:
                    if self._mode == "deflate" and self._first:  # raw deflate, no zlib header
                        self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                        self._first = False
                        continue
                    raise
                self._first = False
                out += piece
                if not self._inflate.eof:
                    data = self._inflate.unconsumed_tail
                    continue
                rest = self._inflate.unused_data
                if self._mode == "deflate" or (rest and rest[:2] != b"\x1f\x8b"):
                    self._done = True  # anything after the end of the stream is padding
                    break
                self._inflate = self._new()  # another gzip member may follow
                data = rest
        except zlib.error as exc:
            raise ToolError("tool_error", f"fetch {shorten(self._target.url)}: the {self._mode} "
                            f"body is corrupt ({exc})", "WEB_CONTENT_ENCODING") from None
        return bytes(out)


class Fetcher:
    """Runs one fetch under ``Settings`` with a resolver and a transport."""

    def __init__(self, settings: Settings, resolver: _guard.Resolver | None,
                 transport: httpx.AsyncBaseTransport, cancelled: threading.Event,
                 check_hop: Callable[[Target], None] | None = None) -> None:
        self.settings = settings
        self.resolver = resolver
        self.transport = transport
        self.cancelled = cancelled
        #: raises a `ToolError` when the permission rules refuse a redirect target
        self.check_hop = check_hop

    async def fetch(self, url: str, wants_body: Callable[[str], bool]) -> Fetched:
        """Follow the URL to its final response and read its body (within the limits).

        ``wants_body(media_type)`` says whether the final body is worth reading
        (a type web_fetch refuses is not downloaded).
        """
        s = self.settings
        target = parse(url)
        redirects = 0
        current = target
        try:
            with anyio.fail_after(s.timeout_s):
                while True:
                    response, _address = await self._send(current)
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        await response.aclose()
                        if redirects >= s.max_redirects:
                            raise ToolError("tool_error", f"fetch {shorten(target.url)}: too "
                                            f"many redirects (more than {s.max_redirects})",
                                            "WEB_TOO_MANY_REDIRECTS")
                        current = self._redirect(current, location)
                        if self.check_hop is not None:
                            self.check_hop(current)
                        redirects += 1
                        continue
                    return await self._final(response, current, redirects > 0, wants_body)
        except TimeoutError:
            raise ToolError("timeout", f"fetch {shorten(current.url)}: timed out after "
                            f"{seconds(s.timeout_s)} s ([web] timeout_s covers the whole call, "
                            "redirects included)", "timeout") from None

    def _redirect(self, current: Target, location: str) -> Target:
        try:
            following = urljoin(current.url, location.strip())
        except ValueError:
            following = location
        scheme = following.split(":", 1)[0].lower() if ":" in following else ""
        if scheme not in ("http", "https"):
            raise ToolError("tool_error", f"fetch {shorten(current.url)}: redirect to a "
                            f"non-http(s) address ({shorten(following)}); web_fetch follows "
                            "http and https only", "WEB_REDIRECT_SCHEME")
        try:
            return parse(following)
        except BadURL as exc:
            raise ToolError("tool_error", f"fetch {shorten(current.url)}: redirect to "
                            f"{shorten(following)} refused: {exc}", "WEB_REDIRECT_URL") from None

    async def _send(self, target: Target) -> tuple[httpx.Response, IPAddress]:
        """Look the hop up, judge every address, then connect to the first that answers."""
        addresses = await anyio.to_thread.run_sync(
            _guard.lookup, target, self.settings.resolve, self.resolver, abandon_on_cancel=True)
        _guard.check(target, addresses, self.settings.allow_loopback)
        last: Exception | None = None
        for address in addresses:
            self._check_cancel(target)
            request = self._request(target, _guard.connect_address(address))
            try:
                response = await self.transport.handle_async_request(request)
            except httpx.ConnectTimeout:
                raise ToolError("timeout", f"fetch {shorten(target.url)}: timed out after "
                                f"{seconds(self.settings.connect_timeout_s)} s while connecting",
                                "timeout") from None
            except httpx.ConnectError as exc:
                tls = _tls_failure(exc)
                if tls is not None:
                    raise ToolError("tool_error", f"fetch {shorten(target.url)}: TLS "
                                    f"verification failed: {tls}", "WEB_TLS") from None
                last = exc
                continue
            except httpx.TimeoutException:
                raise self._timeout(target) from None
            except httpx.TransportError as exc:
                raise _connection_failed(target, exc) from None
            response.request = request
            return response, address
        assert last is not None
        raise _connection_failed(target, last)

    def _request(self, target: Target, address: IPAddress) -> httpx.Request:
        s = self.settings
        headers = [("Host", target.host_header), ("User-Agent", s.user_agent),
                   ("Accept", ACCEPT), ("Accept-Encoding", "gzip, deflate")]
        timeout = {"connect": s.connect_timeout_s, "read": s.timeout_s, "write": s.timeout_s,
                   "pool": s.timeout_s}
        extensions: dict[str, Any] = {"timeout": timeout}
        if target.scheme == "https":
            extensions["sni_hostname"] = target.server_name
        return httpx.Request("GET", target.request_url(address), headers=headers,
                             extensions=extensions)

    async def _final(self, response: httpx.Response, target: Target, redirected: bool,
                     wants_body: Callable[[str], bool]) -> Fetched:
        content_type = response.headers.get("content-type")
        fetched = Fetched(status=response.status_code, reason=_reason(response),
                          content_type=content_type, body=b"", cut=False, url=target.url,
                          redirected=redirected)
        try:
            if not wants_body(content_type or ""):
                fetched.refused_type = True
                return fetched
            body = _Body(response.headers.get("content-encoding", ""), target)
            limit = self.settings.max_bytes
            parts: list[bytes] = []
            total = 0
            async for chunk in response.aiter_raw():
                self._check_cancel(target)
                piece = body.feed(chunk, limit + 1 - total)
                parts.append(piece)
                total += len(piece)
                if total > limit:
                    break
            data = b"".join(parts)
            fetched.cut = len(data) > limit
            fetched.body = data[:limit]
            return fetched
        except httpx.TimeoutException:
            raise self._timeout(target) from None
        except httpx.TransportError as exc:
            raise _connection_failed(target, exc) from None
        finally:
            await response.aclose()

    def _timeout(self, target: Target) -> ToolError:
        return ToolError("timeout", f"fetch {shorten(target.url)}: timed out after "
                         f"{seconds(self.settings.timeout_s)} s", "timeout")

    def _check_cancel(self, target: Target) -> None:
        if self.cancelled.is_set():
            raise ToolError("cancelled", f"fetch {shorten(target.url)}: cancelled",
                            "cancelled")


def _reason(response: httpx.Response) -> str:
    try:
        reason = response.reason_phrase
    except Exception:
        reason = ""
    return reason or ""


def _tls_failure(exc: BaseException) -> str | None:
    """The certificate-verification reason inside a connect error, if that is what it was."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, ssl.SSLCertVerificationError):
            return node.verify_message or str(node)
        node = node.__cause__ or node.__context__
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return text
    return None


def _connection_failed(target: Target, exc: Exception) -> ToolError:
    reason = str(exc).strip() or type(exc).__name__
    return ToolError("tool_error", f"fetch {shorten(target.url)}: connection failed: "
                     f"{reason[:300]}", "WEB_CONNECT")
