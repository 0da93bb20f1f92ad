"""Fixtures for web_fetch: a loopback test server, a stub resolver, a loopback-only transport.

Traffic rule (issue 9): no test may be able to send a packet to a non-loopback
address even if the guard under test is broken. Every in-process test uses
`LoopbackOnly` (it refuses any request whose connect address is not a loopback
IP literal, before any socket is opened) and `StubResolver` (unknown names fail,
so no name ever reaches real DNS); an autouse fixture also makes
``socket.getaddrinfo`` refuse anything but loopback literals while a test runs.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from callgate_web import WebPlugin


class StubResolver:
    """Fixed answers; an unknown name fails like a DNS miss. Counts lookups per name."""

    def __init__(self, answers: Mapping[str, Sequence[str]] | None = None) -> None:
        self.answers = dict(answers or {})
        self.calls: list[str] = []

    def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self.answers[host])


class LoopbackOnly(httpx.AsyncBaseTransport):
    """A real transport that refuses (without connecting) any non-loopback connect address."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.seen: list[str] = []
        self.refused: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            self.refused.append(host)
            raise httpx.ConnectError(f"test transport: refusing to connect to {host!r} "
                                     "(only loopback IP literals)")
        self.seen.append(str(request.url))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Wire:
    """What one test's plugin instance did on the wire: its transports and resolver."""

    def __init__(self, resolver: StubResolver) -> None:
        self.resolver = resolver
        self.transports: list[LoopbackOnly] = []

    def factory(self, tls: ssl.SSLContext) -> LoopbackOnly:
        transport = LoopbackOnly(httpx.AsyncHTTPTransport(verify=tls, retries=0))
        self.transports.append(transport)
        return transport

    @property
    def requests(self) -> list[str]:
        return [url for t in self.transports for url in t.seen]

    @property
    def refused(self) -> list[str]:
        return [host for t in self.transports for host in t.refused]


@pytest.fixture(autouse=True)
def no_real_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any lookup of something other than a loopback literal fails the test loudly."""
    real = socket.getaddrinfo

    def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
        text = host.decode() if isinstance(host, bytes) else str(host)
        try:
            allowed = ipaddress.ip_address(text.split("%")[0]).is_loopback
        except ValueError:
            allowed = False
        if not allowed:
            raise AssertionError(f"a test tried to resolve or reach {text!r}")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    return ("127.0.0.1", 0)


@pytest.fixture
def web(callgate_session: Callable[..., Any]) -> Callable[..., tuple[Any, Wire]]:
    """``web(config={...}, answers={...})`` → (CallgateSession, Wire) with loopback allowed
    unless the config says otherwise."""

    def make(config: Mapping[str, Any] | None = None,
             answers: Mapping[str, Sequence[str]] | None = None,
             resolver: StubResolver | None = None, extra_plugins: Sequence[Any] = (),
             more_config: Mapping[str, Any] | None = None,
             **session_kwargs: Any) -> tuple[Any, Wire]:
        wire = Wire(resolver or StubResolver(answers))
        plugin = WebPlugin(resolver=wire.resolver, transport=wire.factory)
        table = {"allow_loopback": True, **(config or {})}
        session = callgate_session(plugins=[plugin, *extra_plugins],
                                   config={"web": table, **(more_config or {})},
                                   **session_kwargs)
        return session, wire

    return make


@pytest.fixture
def server_log(httpserver: Any) -> Iterator[Callable[[], list[Any]]]:
    """The requests the test server received (for "the server saw nothing")."""
    yield lambda: [request for request, _response in httpserver.log]
