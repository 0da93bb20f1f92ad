"""The address guard: one lookup per hop, every address judged before anything connects.

A host resolves once (``[web] resolve`` first, then the injected or system
resolver); if any of its addresses falls in a refused range, the fetch is
refused. The caller then connects to a checked address itself, so a DNS answer
that changes between check and connect (rebinding) cannot redirect it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence

from callgate import ToolError

from ._url import IPAddress, Target, ip_literal

Resolver = Callable[[str], Sequence[str]]

_net = ipaddress.ip_network

#: Checked in order; the first match names the category (web-and-media.md §1.2).
CATEGORIES: tuple[tuple[str, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]], ...] = (
    ("private", (_net("10.0.0.0/8"), _net("172.16.0.0/12"), _net("192.168.0.0/16"),
                 _net("fc00::/7"))),
    ("link-local", (_net("169.254.0.0/16"), _net("fe80::/10"))),
    ("unspecified", (_net("0.0.0.0/8"), _net("::/128"))),
    ("shared", (_net("100.64.0.0/10"),)),
    ("loopback", (_net("127.0.0.0/8"), _net("::1/128"))),
    ("multicast", (_net("224.0.0.0/4"), _net("ff00::/8"))),
    # Deprecated or translator-only forms that carry an IPv4 address in the low 32 bits:
    # not globally routable (RFC 4291 §2.5.5.1, RFC 6052 / SIIT), yet ``is_global`` to
    # ``ipaddress``; a host that still routes them reaches the embedded IPv4 address.
    ("ipv4-compatible", (_net("::/96"),)),
    ("ipv4-translated", (_net("::ffff:0:0:0/96"),)),
)
_NAT64 = _net("64:ff9b::/96")
#: Not globally reachable, yet global to ``ipaddress`` before Python 3.11.10 / 3.12.4
#: (CVE-2024-4032: most of 192.0.0.0/24, local-use NAT64), or to every version (the
#: deprecated site-local fec0::/10): listed so the guard does not depend on the patch level.
_NON_GLOBAL = (_net("192.0.0.0/24"), _net("64:ff9b:1::/48"), _net("fec0::/10"))
_GLOBAL_IN_NON_GLOBAL = (ipaddress.ip_address("192.0.0.9"), ipaddress.ip_address("192.0.0.10"))


def embedded(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv4-mapped, NAT64 or 6to4 address carries; else the address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def category(address: IPAddress) -> str | None:
    """The refused category an address falls in (``None``: a public address)."""
    judged = embedded(address)
    for name, networks in CATEGORIES:
        if any(judged.version == n.version and judged in n for n in networks):
            return name
    if not judged.is_global:
        return "non-global"
    if judged not in _GLOBAL_IN_NON_GLOBAL and \
            any(judged.version == n.version and judged in n for n in _NON_GLOBAL):
        return "non-global"
    return None


def refused(address: IPAddress, allow_loopback: bool) -> str | None:
    """The category that refuses ``address`` under this config, or ``None``."""
    found = category(address)
    if found == "loopback" and allow_loopback:
        return None
    return found


def connect_address(address: IPAddress) -> IPAddress:
    """Where to connect: an IPv4-mapped address goes to its IPv4 form (the same host)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def system_resolver(host: str) -> list[str]:
    """The system's answer for ``host`` (every address, in its order)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def lookup(target: Target, fixed: Mapping[str, Sequence[str]],
           resolver: Resolver | None) -> list[IPAddress]:
    """The addresses of one hop's host, in order, without duplicates (blocking).

    ``fixed`` is ``[web] resolve``; it wins over the resolver. Failures are
    `ToolError`s the model reads.
    """
    if target.ip is not None:
        return [target.ip]
    name = target.host.rstrip(".")
    answer: Sequence[str] | None = fixed.get(target.host) or fixed.get(name)
    if answer:
        out = []
        for value in answer:
            ip = ip_literal(value)
            if ip is None:
                raise ToolError("tool_error", f"[web] resolve maps {name} to {value!r}, which is "
                                "not an IP address; fix that entry in the config", "WEB_CONFIG")
            out.append(ip)
        return _unique(out)
    try:
        answer = (resolver or system_resolver)(target.host)
    except (OSError, UnicodeError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise _unresolved(target, reason) from None
    out = []
    for value in answer or ():
        ip = ip_literal(str(value))
        if ip is not None:
            out.append(ip)
    if not out:
        raise _unresolved(target, "no addresses")
    return _unique(out)


def check(target: Target, addresses: Sequence[IPAddress], allow_loopback: bool) -> None:
    """Refuse the hop when any address is in a refused range (nothing has connected yet)."""
    for address in addresses:
        found = refused(address, allow_loopback)
        if found is None:
            continue
        advice = ("set [web] allow_loopback = true to fetch from local servers"
                  if found == "loopback" else "web_fetch only reaches public addresses")
        raise ToolError("tool_error", f"refusing to fetch {target.host}: it resolves to "
                        f"{address.compressed} ({found}); {advice}", "WEB_REFUSED_ADDRESS",
                        {"address": address.compressed, "category": found})


def _unresolved(target: Target, reason: str) -> ToolError:
    return ToolError("tool_error", f"fetch {target.url[:200]}: connection failed: cannot resolve "
                     f"{target.host} ({reason}); check the host name", "WEB_RESOLVE")


def _unique(addresses: Sequence[IPAddress]) -> list[IPAddress]:
    seen: set[IPAddress] = set()
    out = []
    for a in addresses:
        if a not in seen:
            seen.add(a)
            out.append(a)
    return out
