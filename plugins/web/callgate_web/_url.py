"""URL checks for web_fetch: what counts as a fetchable address, before any lookup.

The same check judges the model's URL (as a plugin validator, so a bad URL is an
unexecuted validation error at ``/url``) and every redirect target. Hosts are
parsed here rather than by httpx because httpx refuses the legacy IPv4 forms
(``0177.0.0.1``, ``012.0.0.1``) that ``inet_aton`` and many resolvers accept: the
guard must judge those as the addresses they are, not fail open or closed by
accident.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

import attrs

if TYPE_CHECKING:  # httpx is imported on first use: `callgate tools` never needs it
    import httpx

NOT_HTTP = "url must be an absolute http(s) address"
CREDENTIALS = "url must not contain credentials"
DEFAULT_PORTS = {"http": 80, "https": 443}

_LEGACY_IPV4 = re.compile(r"^[0-9a-fx.]+$")
_NAME = re.compile(r"^[a-z0-9_.-]+$")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BadURL(ValueError):
    """The URL is not one web_fetch may fetch; ``str(exc)`` is the reason the model reads."""


@attrs.frozen
class Target:
    """One parsed, checked URL: where to connect and what to tell the server.

    ``host`` is the lower-cased ASCII host as written (IDNA-encoded for names);
    ``ip`` is set when the host is an IP literal (including ``inet_aton`` forms),
    so it is used as is and never looked up.
    """

    url: str
    scheme: str
    host: str
    port: int
    explicit_port: bool
    path: str
    ip: IPAddress | None

    @property
    def host_header(self) -> str:
        """The ``Host`` header: the host as the URL named it, with a port it spelled out."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.explicit_port else host

    @property
    def server_name(self) -> str:
        """The TLS server name the certificate is verified against."""
        return str(self.ip) if self.ip is not None else self.host

    def request_url(self, address: IPAddress) -> httpx.URL:
        """This URL with its host replaced by the checked address (no second lookup)."""
        import httpx

        host = f"[{address.compressed}]" if address.version == 6 else address.compressed
        return httpx.URL(f"{self.scheme}://{host}:{self.port}{self.path}")


def ip_literal(host: str) -> IPAddress | None:
    """The address a host names by itself: an IP literal or any form ``inet_aton`` accepts
    (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``); ``None`` for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _LEGACY_IPV4.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def parse(url: str) -> Target:
    """Check ``url`` (scheme, host, no credentials) and split it; raises `BadURL`."""
    if not isinstance(url, str) or not url or any(c.isspace() for c in url.strip()):
        raise BadURL(NOT_HTTP)
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise BadURL(NOT_HTTP) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.netloc:
        raise BadURL(NOT_HTTP)
    if "@" in parts.netloc:
        raise BadURL(CREDENTIALS)
    raw_host = parts.hostname or ""
    if not raw_host:
        raise BadURL(NOT_HTTP)
    ip = ip_literal(unquote(raw_host))
    host = raw_host if ip is not None else _ascii_name(raw_host)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(url=url.strip(), scheme=scheme, host=host,
                  port=port if port is not None else DEFAULT_PORTS[scheme],
                  explicit_port=port is not None, path=path, ip=ip)


def _ascii_name(name: str) -> str:
    """A host name in its ASCII (IDNA) form, or `BadURL` when it cannot be one."""
    import httpx

    try:
        ascii_name = httpx.URL(f"http://{name}/").raw_host.decode("ascii").lower()
    except (httpx.InvalidURL, UnicodeError):
        raise BadURL(NOT_HTTP) from None
    if not ascii_name or not _NAME.match(ascii_name) or ".." in ascii_name:
        raise BadURL(NOT_HTTP)
    return ascii_name


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _normal_escapes(text: str) -> str:
    """RFC 3986 §6.2.2: escapes of unreserved characters decoded, the rest upper-cased."""
    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return _ESCAPE.sub(one, text)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4: ``/a/./b/../c`` is ``/a/c``; the result starts with ``/``."""
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
            continue
        if segment == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(segment)
    joined = "/".join(out)
    return joined if joined.startswith("/") else "/" + joined


def canonical(target: Target) -> str:
    """The URL rules are matched against: scheme and host lower-case, the host in its
    canonical form (a trailing dot dropped, ``0x7f.1`` as ``127.0.0.1``, IPv6 compressed),
    no default port, ports as plain numbers, escapes normalised, dot segments removed,
    no fragment."""
    if target.ip is not None:
        ip = target.ip
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # the same host (and where the fetch connects)
        host = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    else:
        host = target.host.rstrip(".")
    port = "" if target.port == DEFAULT_PORTS[target.scheme] else f":{target.port}"
    path, _, query = target.path.partition("?")
    path = remove_dot_segments(_normal_escapes(path))
    query = f"?{_normal_escapes(query)}" if "?" in target.path else ""
    return f"{target.scheme}://{host}{port}{path}{query}"


def rule_forms(url: str) -> list[str]:
    """What permission rules see for ``url`` (`PermissionSubject.forms`): the canonical
    URL first (allow rules must match it), then the readings a deny or ask rule is also
    tried on: every escape decoded and runs of ``/`` collapsed (``//secret``,
    ``%2fsecret``). Empty when web_fetch would refuse the URL anyway."""
    try:
        target = parse(url)
    except BadURL:
        return []
    first = canonical(target)
    head, _, rest = first.partition("://")
    host, slash, tail = rest.partition("/")
    path, mark, query = (slash + tail).partition("?")
    decoded = re.sub(r"/{2,}", "/", remove_dot_segments(unquote(path)))
    loose = f"{head}://{host}{quote(decoded, safe='/')}{mark}{unquote(query)}"
    plain = f"{head}://{host}{decoded}{mark}{unquote(query)}"
    return list(dict.fromkeys((first, loose, plain)))


def shorten(url: str, limit: int = 200) -> str:
    """A URL for a message: at most ``limit`` characters."""
    return url if len(url) <= limit else url[: limit - 1] + "…"
