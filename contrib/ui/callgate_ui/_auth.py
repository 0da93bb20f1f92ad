"""The gate in front of every request: the token (when one is set), the Host header, and the
response headers that keep the page to itself.

The token is compared in constant time (`hmac.compare_digest`) on every request, the event
stream's included. A browser brings it once as ``?token=...``; the answer sets an HttpOnly,
SameSite=Strict cookie and redirects to the same address without it, so the token does not
stay in the address bar, in history, or in a Referer.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode

COOKIE = "callgate_ui"
#: No inline script or style and nothing from elsewhere: every asset ships in the package.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class Guard:
    """ASGI middleware: refuses a request without the token (401) or with a ``Host`` not in
    ``allowed_hosts`` (421), and adds the security headers to every response."""

    def __init__(
        self, app: Any, *, token: str | None = None, allowed_hosts: Iterable[str] | None = None
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    @property
    def state(self) -> Any:
        return self.app.state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        if self.hosts is not None and _host_name(headers.get("host", b"")) not in self.hosts:
            await _plain(send, 421, b"unknown host name; open the address callgate ui printed\n")
            return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and self._matches(given.encode()):
                rest = urlencode(
                    [
                        (k, v)
                        for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                        if k != "token"
                    ]
                )
                where = scope.get("path", "/") + (f"?{rest}" if rest else "")
                await _redirect(send, where, self.token)
                return
            if not self._matches(_presented(headers)):
                await _plain(
                    send,
                    401,
                    b"this callgate ui needs its token: open the address "
                    b"it printed, or send Authorization: Bearer <token>\n",
                )
                return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _matches(self, given: bytes | None) -> bool:
        assert self.token is not None
        # compare_digest takes as long for any wrong token of the same length; a missing
        # one is compared against itself so that the same work is done
        if given is None:
            hmac.compare_digest(self.token, self.token)
            return False
        return hmac.compare_digest(given, self.token)


def _presented(headers: dict[str, bytes]) -> bytes | None:
    auth = headers.get("authorization", b"")
    if auth[:7].lower() == b"bearer ":
        return auth[7:].strip()
    for part in headers.get("cookie", b"").split(b";"):
        name, _, value = part.strip().partition(b"=")
        if name == COOKIE.encode():
            return value
    return None


def _host_name(host: bytes) -> str:
    text = host.decode("latin-1").strip().lower()
    if text.startswith("["):  # [::1]:8000
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


async def _plain(send: Any, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Any, where: str, token: bytes) -> None:
    cookie = f"{COOKIE}=".encode() + token + b"; Path=/; HttpOnly; SameSite=Strict"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", where.encode("latin-1")),
                (b"set-cookie", cookie),
                (b"content-length", b"0"),
                *_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
