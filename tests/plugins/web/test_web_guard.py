"""web_fetch's URL check and address guard (web-and-media.md §1.1-§1.4, §4 statements 1-10, 31).

Every test here runs with a stub resolver and a transport that refuses any
non-loopback connect address (see conftest): a broken guard shows up as a
failed assertion, never as a packet on the network.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from callgate_web import category, embedded
from werkzeug import Response

from .conftest import StubResolver


def assert_refused(result: Any, wire: Any, *parts: str) -> None:
    assert result.is_error, result.text
    assert result.error.kind == "tool_error"
    assert result.error.signature == "WEB_REFUSED_ADDRESS"
    assert "refusing to fetch" in result.text
    for part in parts:
        assert part in result.text
    assert wire.requests == [] and wire.refused == []  # nothing even tried to connect


# --- §1.1 the URL check (statements 1, 2) ------------------------------------------------


def test_file_url_is_an_unexecuted_validation_error(web: Any, server_log: Any) -> None:
    """Statement 1."""
    s, wire = web()
    r = s.call("web_fetch", {"url": "file:///etc/passwd"})
    assert r.is_error and r.error.kind == "invalid_arguments"
    assert "http(s)" in r.text and "/url" in r.text
    assert r.meta["executed"] is False
    assert wire.transports == [] and wire.resolver.calls == [] and server_log() == []


@pytest.mark.parametrize("url", ["ftp://example.com/x", "http://", "http:///path", "not a url",
                                 "//example.com/x", "http://[::1/", "http://exa mple.com/",
                                 "http://host:99999/", "javascript:alert(1)", "HTTP:/x"])
def test_malformed_and_non_http_urls_are_refused_before_any_lookup(web: Any, url: str) -> None:
    s, wire = web()
    r = s.call("web_fetch", {"url": url})
    assert r.error.kind == "invalid_arguments", r.text
    assert "url must be an absolute http(s) address" in r.text
    assert wire.resolver.calls == [] and wire.transports == []


def test_url_with_credentials_is_refused(web: Any, httpserver: Any, server_log: Any) -> None:
    """Statement 2."""
    s, wire = web()
    r = s.call("web_fetch", {"url": f"http://user:pw@127.0.0.1:{httpserver.port}/"})
    assert r.error.kind == "invalid_arguments"
    assert "must not contain credentials" in r.text
    assert server_log() == [] and wire.transports == []


def test_scheme_and_host_are_case_insensitive(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/x").respond_with_data("ok", content_type="text/plain")
    s, _ = web()
    r = s.call("web_fetch", {"url": f"HTTP://127.0.0.1:{httpserver.port}/x"})
    assert not r.is_error, r.text
    assert r.text.endswith("\n\nok")


def test_url_longer_than_2048_characters_is_invalid(web: Any) -> None:
    s, wire = web()
    r = s.call("web_fetch", {"url": "http://example.com/" + "a" * 2100})
    assert r.error.kind == "invalid_arguments" and "/url" in r.text
    assert wire.resolver.calls == []


# --- §1.2 the address guard (statements 3-8, 31) -----------------------------------------


@pytest.mark.parametrize("url,shown,category_name", [
    ("http://10.0.0.1/", "10.0.0.1", "private"),
    ("http://192.168.1.1/", "192.168.1.1", "private"),
    ("http://172.16.5.4/", "172.16.5.4", "private"),
    ("http://[fd00::1]/", "fd00::1", "private"),
    ("http://169.254.169.254/latest", "169.254.169.254", "link-local"),
    ("http://[fe80::1]/", "fe80::1", "link-local"),
    ("http://100.64.0.1/", "100.64.0.1", "shared"),
    ("http://0.0.0.0/", "0.0.0.0", "unspecified"),
    ("http://[::]/", "::", "unspecified"),
    ("http://224.0.0.1/", "224.0.0.1", "multicast"),
    ("http://[ff02::1]/", "ff02::1", "multicast"),
    ("http://192.0.2.10/", "192.0.2.10", "non-global"),
    ("http://198.18.0.1/", "198.18.0.1", "non-global"),
    ("http://255.255.255.255/", "255.255.255.255", "non-global"),
    ("http://[::ffff:10.0.0.1]/", "::ffff:a00:1", "private"),
    ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe", "link-local"),
    ("http://[2002:c0a8:0101::1]/", "2002:c0a8:101::1", "private"),
])
def test_non_public_addresses_are_refused_by_category(web: Any, server_log: Any, url: str,
                                                      shown: str, category_name: str) -> None:
    """Statements 3, 4, 5 (and the other rows of the category table)."""
    s, wire = web()
    r = s.call("web_fetch", {"url": url})
    assert_refused(r, wire, f"it resolves to {shown} ({category_name})")
    assert server_log() == []


def test_loopback_refused_unless_allowed(web: Any, httpserver: Any, server_log: Any) -> None:
    """Statement 6."""
    httpserver.expect_request("/").respond_with_data("hello", content_type="text/plain")
    url = f"http://127.0.0.1:{httpserver.port}/"
    s, wire = web(config={"allow_loopback": False})
    r = s.call("web_fetch", {"url": url})
    assert_refused(r, wire, "refusing to fetch 127.0.0.1: it resolves to 127.0.0.1 (loopback)",
                   "allow_loopback")
    assert server_log() == []
    s2, _ = web(config={"allow_loopback": True})
    r2 = s2.call("web_fetch", {"url": url})
    assert not r2.is_error, r2.text
    assert r2.text.startswith("status 200 OK")
    assert len(server_log()) == 1


def test_ipv6_loopback_follows_allow_loopback(web: Any) -> None:
    s, wire = web(config={"allow_loopback": False})
    assert_refused(s.call("web_fetch", {"url": "http://[::1]:9/"}), wire, "::1 (loopback)")


def test_config_resolve_pins_a_name_and_keeps_the_host_header(web: Any, httpserver: Any) -> None:
    """Statement 7: the connection goes to the pinned address; the server sees the name."""
    httpserver.expect_request("/x").respond_with_data("pinned", content_type="text/plain")
    s, wire = web(config={"resolve": {"docs.test": ["127.0.0.1"]}})
    r = s.call("web_fetch", {"url": f"http://docs.test:{httpserver.port}/x"})
    assert not r.is_error, r.text
    assert r.text.startswith("status 200 OK")
    [(request, _)] = httpserver.log
    assert request.headers["Host"] == f"docs.test:{httpserver.port}"
    assert request.headers["User-Agent"].startswith("callgate-web-fetch/")
    assert "text/markdown" in request.headers["Accept"]
    assert wire.resolver.calls == []  # [web] resolve answered; the resolver was not asked
    assert wire.requests == [f"http://127.0.0.1:{httpserver.port}/x"]


def test_one_refused_address_among_several_refuses_the_fetch(web: Any, httpserver: Any,
                                                            server_log: Any) -> None:
    """Statement 8."""
    s, wire = web(config={"resolve": {"mixed.test": ["127.0.0.1", "10.1.2.3"]}})
    r = s.call("web_fetch", {"url": f"http://mixed.test:{httpserver.port}/"})
    assert_refused(r, wire, "refusing to fetch mixed.test: it resolves to 10.1.2.3 (private)")
    assert server_log() == []


def test_resolver_answer_is_judged_and_looked_up_once(web: Any, httpserver: Any) -> None:
    """One lookup per hop, and the connection goes to the address that was checked."""
    httpserver.expect_request("/a").respond_with_data("A", content_type="text/plain")
    s, wire = web(answers={"app.test": ["127.0.0.1"], "evil.test": ["127.0.0.1", "10.9.9.9"]})
    r = s.call("web_fetch", {"url": f"http://app.test:{httpserver.port}/a"})
    assert not r.is_error, r.text
    assert wire.resolver.calls == ["app.test"]
    assert wire.requests == [f"http://127.0.0.1:{httpserver.port}/a"]
    r2 = s.call("web_fetch", {"url": f"http://evil.test:{httpserver.port}/a"})
    assert "it resolves to 10.9.9.9 (private)" in r2.text


class Rebinding(StubResolver):
    """Answers loopback first, then a private address: a DNS-rebinding attacker."""

    def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return ["127.0.0.1"] if len(self.calls) == 1 else ["10.0.0.5"]


def test_rebinding_resolver_cannot_swap_the_address_after_the_check(web: Any,
                                                                   httpserver: Any) -> None:
    """One lookup per hop: a resolver that answers differently the second time is never
    asked a second time, and the connection goes to the address that was judged."""
    httpserver.expect_request("/p").respond_with_data("safe", content_type="text/plain")
    s, wire = web(resolver=Rebinding())
    r = s.call("web_fetch", {"url": f"http://rebind.test:{httpserver.port}/p"})
    assert not r.is_error, r.text
    assert wire.resolver.calls == ["rebind.test"]
    assert wire.requests == [f"http://127.0.0.1:{httpserver.port}/p"] and wire.refused == []


def test_unknown_name_is_a_connection_failure_without_traffic(web: Any) -> None:
    s, wire = web()
    r = s.call("web_fetch", {"url": "http://nowhere.test/"})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text.startswith("fetch http://nowhere.test/: connection failed: cannot resolve "
                             "nowhere.test")
    assert wire.requests == []


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "0x7f.1", "127.1"])
def test_legacy_ipv4_forms_are_judged_as_loopback(web: Any, httpserver: Any, server_log: Any,
                                                 host: str) -> None:
    """Statement 31: inet_aton forms are IPv4 literals, never looked up."""
    s, wire = web(config={"allow_loopback": False})
    r = s.call("web_fetch", {"url": f"http://{host}:{httpserver.port}/"})
    assert_refused(r, wire, f"refusing to fetch {host}: it resolves to 127.0.0.1 (loopback)")
    assert wire.resolver.calls == []
    assert server_log() == []


def test_legacy_octal_form_of_a_private_address_is_refused(web: Any) -> None:
    """Statement 31: ``012.0.0.1`` is 10.0.0.1."""
    s, wire = web(config={"allow_loopback": False})
    r = s.call("web_fetch", {"url": "http://012.0.0.1/"})
    assert_refused(r, wire, "refusing to fetch 012.0.0.1", "10.0.0.1 (private)")


def test_legacy_form_reaches_loopback_when_allowed(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/").respond_with_data("via inet_aton", content_type="text/plain")
    s, wire = web()
    r = s.call("web_fetch", {"url": f"http://2130706433:{httpserver.port}/"})
    assert r.text.endswith("via inet_aton"), r.text
    assert httpserver.log[0][0].headers["Host"] == f"2130706433:{httpserver.port}"
    assert wire.resolver.calls == []


# --- §1.4 redirects (statements 9, 10) ---------------------------------------------------


def test_redirect_into_a_private_network_is_refused(web: Any, httpserver: Any) -> None:
    """Statement 9, first half."""
    httpserver.expect_request("/r").respond_with_response(
        Response(status=302, headers={"Location": "http://10.0.0.1/"}))
    s, wire = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert r.is_error
    assert "refusing to fetch 10.0.0.1: it resolves to 10.0.0.1 (private)" in r.text
    assert wire.refused == []
    assert wire.requests == [f"http://127.0.0.1:{httpserver.port}/r"]


def test_redirect_through_a_name_is_looked_up_and_judged(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/r").respond_with_response(
        Response(status=301, headers={"Location": "http://metadata.test/latest"}))
    s, wire = web(answers={"metadata.test": ["169.254.169.254"]})
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert "refusing to fetch metadata.test: it resolves to 169.254.169.254 (link-local)" \
        in r.text
    assert wire.resolver.calls == ["metadata.test"] and wire.refused == []


def test_followed_redirect_is_named_in_the_header(web: Any, httpserver: Any) -> None:
    """Statement 9, second half."""
    httpserver.expect_request("/r").respond_with_response(
        Response(status=302, headers={"Location": "/ok"}))
    httpserver.expect_request("/ok").respond_with_data("landed", content_type="text/plain")
    s, _ = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert not r.is_error, r.text
    first = r.text.splitlines()[0]
    assert first == (f"status 200 OK · text/plain · 6 bytes · redirected to "
                     f"http://127.0.0.1:{httpserver.port}/ok")
    assert r.text.endswith("\n\nlanded")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_every_redirect_status_is_followed(web: Any, httpserver: Any, status: int) -> None:
    httpserver.expect_request("/r").respond_with_response(
        Response(status=status, headers={"Location": "/ok"}))
    httpserver.expect_request("/ok").respond_with_data("ok", content_type="text/plain")
    s, _ = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert "redirected to" in r.text.splitlines()[0]


def test_too_many_redirects(web: Any, httpserver: Any) -> None:
    """Statement 10, first half: 6 redirects with max_redirects = 5."""
    for i in range(6):
        httpserver.expect_request(f"/h{i}").respond_with_response(
            Response(status=302, headers={"Location": f"/h{i + 1}"}))
    httpserver.expect_request("/h6").respond_with_data("end", content_type="text/plain")
    s, wire = web(config={"max_redirects": 5})
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/h0"})
    assert r.is_error and "too many redirects (more than 5)" in r.text
    assert len(wire.requests) == 6  # h0..h5; h6 was never requested
    s2, _ = web(config={"max_redirects": 6})
    r2 = s2.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/h0"})
    assert r2.text.endswith("\n\nend"), r2.text


def test_zero_redirects_allowed(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/r").respond_with_response(
        Response(status=302, headers={"Location": "/ok"}))
    s, _ = web(config={"max_redirects": 0})
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert "too many redirects (more than 0)" in r.text


@pytest.mark.parametrize("location", ["ftp://x/", "file:///etc/passwd", "gopher://x:70/"])
def test_redirect_to_a_non_http_address(web: Any, httpserver: Any, location: str) -> None:
    """Statement 10, second half."""
    httpserver.expect_request("/r").respond_with_response(
        Response(status=302, headers={"Location": location}))
    s, wire = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert r.is_error and "redirect to a non-http(s) address" in r.text
    assert len(wire.requests) == 1


def test_redirect_with_credentials_is_refused(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/r").respond_with_response(
        Response(status=302, headers={"Location": "http://u:p@127.0.0.1/"}))
    s, wire = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/r"})
    assert r.is_error and "must not contain credentials" in r.text
    assert len(wire.requests) == 1


# --- the classification itself ------------------------------------------------------------


@pytest.mark.parametrize("address,expected", [
    ("8.8.8.8", None), ("2606:4700:4700::1111", None), ("::ffff:8.8.8.8", None),
    ("2002:0808:0808::1", None), ("64:ff9b::808:808", None),
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("::ffff:127.0.0.1", "loopback"),
    ("172.31.255.255", "private"), ("172.32.0.1", None), ("100.127.255.255", "shared"),
    ("100.128.0.1", None), ("239.255.255.250", "multicast"), ("240.0.0.1", "non-global"),
    ("2001:db8::1", "non-global"),
])
def test_category_table(address: str, expected: str | None) -> None:
    assert category(ipaddress.ip_address(address)) == expected


def test_embedded_ipv4_forms() -> None:
    assert str(embedded(ipaddress.ip_address("::ffff:10.0.0.1"))) == "10.0.0.1"
    assert str(embedded(ipaddress.ip_address("64:ff9b::a00:1"))) == "10.0.0.1"
    assert str(embedded(ipaddress.ip_address("2002:a00:1::"))) == "10.0.0.1"
