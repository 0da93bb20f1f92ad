"""Attack class: fetching what a web_fetch rule denies (issue 16, defect 10).

URL rules used to be string matches on what the model wrote, and redirects were
not judged at all. The attacker spells a denied URL every way a server (or the
resolver) reads the same (``//secret``, ``/./secret``, ``%73ecret``, ``..``,
``:08080``, ``0x7f.1``, ``[::ffff:127.0.0.1]``, a trailing-dot host, upper case),
bounces through redirects into it, and tries the IPv6 forms that carry an IPv4
address (``::/96``, ``::ffff:0:0:0/96``).

Everything runs in a network namespace whose only interface is ``lo`` (traffic
rule: even a broken guard could not reach another address), with the real
resolver and transport against a loopback listener that records each request.
Counted: requests for a denied path or host that reached the listener (must be
0), fetches that returned the secret (must be 0); the controls must still fetch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from callgate_web._guard import category
from callgate_web._url import rule_forms

from .test_network_guard import netns_unavailable

NETNS_SCRIPT = Path(__file__).with_name("_netns_rules.py")


def test_rules_and_redirects_hold_against_every_spelling_in_a_network_namespace(
        figure: Callable[..., None]) -> None:
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"network-namespace test skipped: {reason}")
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$1"', sys.executable,
         str(NETNS_SCRIPT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["no_route_out"] is True
    res = out["results"]
    leaked = [r for group in ("rule bypass", "redirect", "ipv6 blocks") for r in res[group]
              if r["fetched"] or r["secret"]]
    how: dict[str, int] = {}
    for group in ("rule bypass", "redirect", "ipv6 blocks"):
        for r in res[group]:
            how[str(r["how"])] = how.get(str(r["how"]), 0) + 1
    cases = sum(len(res[g]) for g in ("rule bypass", "redirect", "ipv6 blocks"))
    figure("web_fetch rules (netns)", cases=cases, outcomes=how,
           denied_requests=out["secret_requests"] + out["localhost_requests"],
           failures=len(leaked) + out["secret_requests"] + out["localhost_requests"])
    assert not leaked, leaked
    assert out["secret_requests"] == 0 and out["localhost_requests"] == 0, out
    assert all(r["how"].startswith("deny:") for r in res["rule bypass"]), res["rule bypass"]
    assert all(r["how"] == "WEB_REFUSED_ADDRESS" for r in res["ipv6 blocks"]), res["ipv6 blocks"]
    # a redirect into a denied URL stops before the lookup: only the redirecting hop was sent
    assert all(len(r["requests"]) <= 2 and r["how"].split(":")[0] in ("deny", "ask")
               for r in res["redirect"]), res["redirect"]
    ask_hop = res["redirect"][-1]
    assert ask_hop["how"].startswith("ask:") and "needs its own approval" in ask_hop["text"]
    assert [r["fetched"] for r in res["control"]] == [True, True, True], res["control"]
    assert out["asked"] == [res["control"][2]["url"]]  # asked for the direct call only


@pytest.mark.parametrize(("url", "canonical"), [
    ("https://Example.COM./a", "https://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:08080/a", "http://example.com:8080/a"),
    ("http://0x7f.1/", "http://127.0.0.1/"),
    ("http://[::ffff:127.0.0.1]/", "http://127.0.0.1/"),
    ("http://[2001:DB8::1]/", "http://[2001:db8::1]/"),
    ("https://example.com/a/./b/../%63?q=%7e#f", "https://example.com/a/c?q=~"),
    ("https://example.com", "https://example.com/"),
])
def test_rules_see_the_canonical_url_first(url: str, canonical: str) -> None:
    assert rule_forms(url)[0] == canonical


def test_the_two_ipv4_carrying_ipv6_blocks_are_not_public() -> None:
    import ipaddress

    for text, name in (("::8.8.8.8", "ipv4-compatible"), ("::7f00:1", "ipv4-compatible"),
                       ("::ffff:0:808:808", "ipv4-translated"),
                       ("::ffff:0:7f00:1", "ipv4-translated")):
        assert category(ipaddress.ip_address(text)) == name
    assert category(ipaddress.ip_address("::1")) == "loopback"
    assert category(ipaddress.ip_address("::")) == "unspecified"
    assert category(ipaddress.ip_address("2606:4700::1111")) is None
