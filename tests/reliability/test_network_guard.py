"""Figure 7, the network guard: web_fetch never fetches from a private, link-local,
loopback, shared, multicast, unspecified or otherwise non-global address, however the
address is spelled or reached.

Traffic rule: no test here can send a packet to a non-loopback address even if the
guard is broken.

- The generated cases (`test_generated_refused_addresses_are_never_fetched`) run
  in-process with an injected stub resolver (unknown names fail; nothing reaches DNS) and
  an injected transport that is a fake internet: it answers public addresses itself
  (with a redirect when asked) and records any request for a refused one, never opening
  a socket. ``socket.getaddrinfo`` and ``socket.connect`` are also made to fail for
  anything but loopback while the test runs.
- The real resolver and transport (`test_real_transport_in_a_network_namespace`) run
  only inside ``unshare -n``: a namespace whose only interface is ``lo``, where a
  loopback listener counts connections; skipped with the reason where no namespace can
  be made.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from callgate_web import WebPlugin
from hypothesis import given
from hypothesis import strategies as st

from ._hypo import fixed

PUBLIC = "93.184.216.34"
#: IANA special-purpose registries: blocks not globally reachable (plus multicast and the
#: deprecated site-local block). Written out here so the test does not share the guard's
#: source of truth (Python's ``ipaddress``, whose table changed in 3.11.10 / 3.12.4).
NOT_GLOBAL = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
    "::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
    "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8")]
GLOBAL_INSIDE = [ipaddress.ip_network(n) for n in (
    "192.0.0.9/32", "192.0.0.10/32", "2001:1::1/128", "2001:1::2/128", "2001:3::/32",
    "2001:4:112::/48", "2001:20::/28", "2001:30::/28")]
METADATA = ["169.254.169.254/32", "169.254.170.2/32", "fd00:ec2::254/128",
            "100.100.100.200/32"]
NETNS_SCRIPT = Path(__file__).with_name("_netns_guard.py")


def _plain(ip: ipaddress.IPv4Address | ipaddress.IPv6Address
           ) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 address carries."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in ipaddress.ip_network("64:ff9b::/96"):
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
    return ip


def refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The test's own judgement, from the table above."""
    ip = _plain(ip)
    inside = any(ip.version == n.version and ip in n for n in NOT_GLOBAL)
    return inside and not any(ip.version == n.version and ip in n for n in GLOBAL_INSIDE)


class FakeInternet(httpx.AsyncBaseTransport):
    """Answers public addresses itself; a request for a refused address is recorded (the
    guard failed) and answered too, so the failure is visible. Never opens a socket."""

    def __init__(self) -> None:
        self.fetched_refused: list[str] = []
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        ip = ipaddress.ip_address(request.url.host)
        if refused(ip):
            self.fetched_refused.append(str(request.url))
            return _response(200, b"LEAKED")
        if request.url.path == "/r":
            target = parse_qs(urlsplit(str(request.url)).query)["to"][0]
            return _response(302, b"", location=target)
        return _response(200, b"public")


def _response(status: int, body: bytes, **headers: str) -> httpx.Response:
    """A response as a real transport gives it: an unread stream."""
    return httpx.Response(status, headers={"content-type": "text/plain", **headers},
                          stream=httpx.ByteStream(body))


class StubResolver:
    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {"pub.test": [PUBLIC]}

    def __call__(self, host: str) -> list[str]:
        name = host.rstrip(".").lower()
        if name not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answers[name]


@pytest.fixture
def loopback_only_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Belt and braces: no lookup of a name and no connect to a non-loopback address."""
    real_gai, real_connect = socket.getaddrinfo, socket.socket.connect

    def loopback(host: Any) -> bool:
        try:
            return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return False

    def gai(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not loopback(host.decode() if isinstance(host, bytes) else host):
            raise AssertionError(f"a lookup of {host!r} was attempted")
        return real_gai(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address[0]):
            raise AssertionError(f"a connection to {address!r} was attempted")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", gai)
    monkeypatch.setattr(socket.socket, "connect", connect)


# --- spellings ------------------------------------------------------------------------


def v4_spellings(ip: ipaddress.IPv4Address) -> list[str]:
    """Ways to write one IPv4 address that inet_aton (and many resolvers) accept."""
    v = int(ip)
    a, b, c, d = ip.packed
    return [str(ip), str(v), f"0x{v:x}", f"0X{v:X}", f"0{v:o}" if v else "0",
            ".".join(f"0{x:o}" if x else "0" for x in (a, b, c, d)),
            ".".join(f"0x{x:x}" for x in (a, b, c, d)),
            f"{a}.{b}.{(c << 8) | d}", f"{a}.{(b << 16) | (c << 8) | d}",
            f"0x{a:x}.{b}.0{c:o}.{d}" if c else f"0x{a:x}.{b}.0.{d}",
            f"[::ffff:{ip}]", f"[::ffff:{(v >> 16):x}:{(v & 0xFFFF):x}]",
            f"[0:0:0:0:0:ffff:{ip}]", f"[64:ff9b::{ip}]",
            f"[2002:{(v >> 16):x}:{(v & 0xFFFF):x}::1]"]


def v6_spellings(ip: ipaddress.IPv6Address) -> list[str]:
    return [f"[{ip.compressed}]", f"[{ip.exploded}]", f"[{ip.compressed.upper()}]"]


@st.composite
def refused_urls(draw: st.DrawFn, resolver: StubResolver) -> tuple[str, str]:
    """(url, what it is): a refused address reached literally, by a name, or by redirect."""
    net = draw(st.sampled_from(NOT_GLOBAL + [ipaddress.ip_network(m) for m in METADATA]))
    ip = net[draw(st.integers(0, net.num_addresses - 1))]
    if not refused(ip):  # one of the few global addresses inside a special block
        ip = net[0]
    spelled = draw(st.sampled_from(v4_spellings(ip) if ip.version == 4 else v6_spellings(ip)))
    port = draw(st.sampled_from(["", ":80", ":8080", ":443"]))
    scheme = draw(st.sampled_from(["http", "https", "HTTP"]))
    path = draw(st.sampled_from(["/", "/latest/meta-data/", "/x?y=1", ""]))
    how = draw(st.sampled_from(["literal", "name", "name+public", "redirect"]))
    if how == "literal":
        return f"{scheme}://{spelled}{port}{path}", f"{ip} as {spelled}"
    if how in ("name", "name+public"):
        name = f"h{draw(st.integers(0, 10**6))}.test"
        answer = [str(ip)] if how == "name" else draw(st.permutations([str(ip), PUBLIC]))
        resolver.answers[name] = list(answer)
        shown = draw(st.sampled_from([name, name.upper(), name + "."]))
        return f"{scheme}://{shown}{port}{path}", f"{name} -> {answer}"
    inner = f"http://{spelled}{port}{path}"
    return f"http://pub.test/r?to={quote(inner, safe='')}", f"redirect to {inner}"


def test_generated_refused_addresses_are_never_fetched(
        callgate_session: Callable[..., Any], loopback_only_sockets: None,
        cases: Callable[[int, int], int], figure: Callable[..., None]) -> None:
    total = cases(2000, 150)
    resolver, internet = StubResolver(), FakeInternet()
    plugin = WebPlugin(resolver=resolver, transport=lambda tls: internet)
    s = callgate_session(plugins=[plugin], config={"web": {"timeout_s": 5}})
    control = s.call("web_fetch", {"url": "http://pub.test/"})
    assert not control.is_error and control.text.endswith("public"), control.text
    failures: list[str] = []
    outcome: dict[str, int] = {}

    @fixed(total)
    @given(refused_urls(resolver))
    def one(case: tuple[str, str]) -> None:
        url, what = case
        before = len(internet.fetched_refused)
        r = s.call("web_fetch", {"url": url})
        kind = r.error.signature if r.is_error and r.error else "fetched"
        kind = "invalid_url" if r.is_error and r.error and \
            r.error.kind == "invalid_arguments" else kind
        outcome[kind] = outcome.get(kind, 0) + 1
        if len(internet.fetched_refused) > before or not r.is_error:
            failures.append(f"{url} ({what}): {r.text[:160]!r}")

    one()
    figure("network guard", cases=sum(outcome.values()), fetched=len(internet.fetched_refused),
           outcomes=outcome, public_requests=internet.requests, failures=len(failures))
    assert not failures, "\n".join(failures[:20])


def netns_unavailable() -> str | None:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare or ip (iproute2) is not installed"
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot create a network namespace here: {probe.stderr.strip()}"
    return None


def test_real_transport_in_a_network_namespace(figure: Callable[..., None]) -> None:
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"network-namespace test skipped: {reason}")
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$1"', sys.executable,
         str(NETNS_SCRIPT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["no_route_out"] is True  # the namespace really has no way out
    assert out["control_status"] == 200, out  # a permitted fetch works here
    wrong = [r for r in out["results"] if r["fetched"]]
    how: dict[str, int] = {}
    for r in out["results"]:
        how[str(r["how"])] = how.get(str(r["how"]), 0) + 1
    figure("network guard (real transport, netns)", cases=len(out["results"]),
           listener_connections=out["connections"], outcomes=how,
           failures=len(wrong) + out["connections"])
    assert out["connections"] == 0, out
    assert not wrong, wrong
