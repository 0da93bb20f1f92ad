"""web_fetch's request, body, classification, conversion and errors (web-and-media.md §1.3,
§1.5-§1.10, §4 statements 11-19 and 30), against a loopback test server."""

from __future__ import annotations

import gzip
import ssl
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
import trustme
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

PAGE = (
    "<!DOCTYPE html><html><head><title>Doc title</title>"
    "<style>.x{color:red}</style><script>alert(1)</script></head><body>"
    "<h1>Main</h1>"
    "<p>Tom&#39;s &nbsp; docs &amp; more</p>"
    '<a href="/guide?a=1&amp;b=2">guide</a>'
    "<ul><li>First</li><li>Second</li></ul>"
    "<pre><code>go test ./...\nline two</code></pre>"
    "<table><tr><th>Name</th><th>Value</th></tr><tr><td>A</td><td>42</td></tr></table>"
    "<!-- a comment nobody reads --><noscript>enable js</noscript>"
    "<iframe src='/frame'></iframe><svg><text>vector</text></svg>"
    "<script>document.write('late')</script>"
    "</body></html>"
)


def url(server: Any, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


def body_of(result: Any) -> str:
    """The text after the header line and the blank line."""
    _head, sep, rest = result.text.partition("\n\n")
    assert sep, result.text
    return rest


# --- HTML (statements 11, 12) ----------------------------------------------------------


def test_html_page_becomes_readable_markdown(web: Any, httpserver: Any) -> None:
    """Statement 11."""
    httpserver.expect_request("/doc").respond_with_data(PAGE, content_type="text/html")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/doc")})
    assert not r.is_error, r.text
    text = body_of(r)
    assert text.startswith("Title: Doc title\n\n")
    assert "# Main" in text
    assert "Tom's docs & more" in text
    assert f"[guide](http://127.0.0.1:{httpserver.port}/guide?a=1&b=2)" in text
    assert "- First" in text and "- Second" in text
    assert "```\ngo test ./...\nline two\n```" in text
    assert "| A | 42 |" in text and "| Name | Value |" in text
    for absent in ("alert(", "color:red", "<p", "&amp;", "a comment", "enable js", "vector",
                   "document.write", "\xa0"):
        assert absent not in text
    assert "\n\n\n" not in text and not any(line.endswith(" ") for line in text.splitlines())


def test_html_header_line(web: Any, httpserver: Any) -> None:
    """Statement 12."""
    httpserver.expect_request("/doc").respond_with_data(PAGE, content_type="text/html")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/doc")})
    assert r.text.splitlines()[0] == f"status 200 OK · text/html · {len(PAGE.encode())} bytes"
    assert r.meta["status"] == 200 and r.meta["bytes"] == len(PAGE.encode())


def test_html_images_and_relative_links_are_absolute_against_the_final_url(
        web: Any, httpserver: Any) -> None:
    html = ("<html><body><p><img src='img/logo.png' alt='Logo'></p>"
            "<p><a href='../up.html'>up</a> <a href='https://other.example/x'>abs</a></p>"
            "<p><img src='data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAE' alt='dot'></p>"
            "<pre class='language-python'>print(1)\n\n\n\nprint(2)</pre>"
            "</body></html>")
    httpserver.expect_request("/docs/page").respond_with_response(
        Response(status=302, headers={"Location": "/docs/v2/page"}))
    httpserver.expect_request("/docs/v2/page").respond_with_data(html, content_type="text/html")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/docs/page")})
    text = body_of(r)
    base = f"http://127.0.0.1:{httpserver.port}"
    assert f"![Logo]({base}/docs/v2/img/logo.png)" in text
    assert f"[up]({base}/docs/up.html)" in text
    assert "[abs](https://other.example/x)" in text
    assert "![dot](data:image/png;base64,…)" in text and "iVBOR" not in text
    assert "```python\nprint(1)" in text
    assert not text.startswith("Title:")


def test_untyped_html_is_sniffed_and_converted(web: Any, httpserver: Any) -> None:
    """Statement 15, second half."""
    page = b"  \n<!DOCTYPE html><html><body><h2>Sniffed</h2></body></html>"
    response = Response(page)
    del response.headers["Content-Type"]
    httpserver.expect_request("/u").respond_with_response(response)
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/u")})
    assert not r.is_error, r.text
    assert body_of(r) == "## Sniffed"


def test_octet_stream_html_is_converted_but_octet_stream_text_is_refused(
        web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/h").respond_with_data(
        b"<HTML><body><p>x</p></body></HTML>", content_type="application/octet-stream")
    httpserver.expect_request("/t").respond_with_data(
        b"just text", content_type="application/octet-stream")
    s, _ = web()
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/h")})) == "x"
    r = s.call("web_fetch", {"url": url(httpserver, "/t")})
    assert r.is_error and "unsupported media type application/octet-stream (9 bytes read)" \
        in r.text


def test_html_charset_from_meta(web: Any, httpserver: Any) -> None:
    page = ('<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head>'
            "<body><p>na\xefve \u201cquotes\u201d</p></body></html>").encode("cp1252")
    httpserver.expect_request("/m").respond_with_response(
        Response(page, headers={"Content-Type": "text/html"}))
    s, _ = web()
    text = body_of(s.call("web_fetch", {"url": url(httpserver, "/m")}))
    assert text == "Title: Café\n\nnaïve \u201cquotes\u201d"


# --- verbatim text (statements 13, 14) -------------------------------------------------


def test_json_is_returned_exactly(web: Any, httpserver: Any) -> None:
    """Statement 13."""
    body = '{"b": 1,  "a": [1,2]}'
    httpserver.expect_request("/j").respond_with_data(body, content_type="application/json")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/j")})
    assert r.text == f"status 200 OK · application/json · {len(body)} bytes\n\n{body}"


def test_declared_charset_is_honoured(web: Any, httpserver: Any) -> None:
    """Statement 14, first half."""
    httpserver.expect_request("/c").respond_with_data(
        b"caf\xe9", content_type="text/plain; charset=iso-8859-1")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/c")})
    assert r.text.splitlines()[0] == "status 200 OK · text/plain · 4 bytes"
    assert body_of(r) == "café"


def test_markdown_is_returned_verbatim(web: Any, httpserver: Any) -> None:
    """Statement 14, second half."""
    httpserver.expect_request("/md").respond_with_data("# T\n\n*x*", content_type="text/markdown")
    s, _ = web()
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/md")})) == "# T\n\n*x*"


@pytest.mark.parametrize("content_type,body", [
    ("application/problem+json", '{"title":"x"}'),
    ("application/atom+xml", "<feed/>"),
    ("application/x-yaml", "a: 1\n"),
    ("application/toml", "a = 1\n"),
    ("application/javascript", "let a = '<html>'"),
    ("text/csv", "a,b\n1,2\n"),
    ("text/plain; charset=no-such-charset", "plain"),
])
def test_verbatim_types(web: Any, httpserver: Any, content_type: str, body: str) -> None:
    httpserver.expect_request("/v").respond_with_data(body, content_type=content_type)
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/v")})
    assert body_of(r) == body, r.text


def test_bom_decides_the_encoding_and_bad_bytes_become_replacement_characters(
        web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/bom").respond_with_data(
        b"\xff\xfe" + "hi ü".encode("utf-16-le"), content_type="text/plain")
    httpserver.expect_request("/bad").respond_with_data(b"ok \xff\xfe end",
                                                        content_type="text/plain")
    s, _ = web()
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/bom")})) == "hi ü"
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/bad")})) == "ok \ufffd\ufffd end"


def test_untyped_utf8_text_is_verbatim_and_untyped_binary_is_refused(
        web: Any, httpserver: Any) -> None:
    text = Response("plain words\n")
    del text.headers["Content-Type"]
    binary = Response(b"\x00\x01\x02binary")
    del binary.headers["Content-Type"]
    httpserver.expect_request("/t").respond_with_response(text)
    httpserver.expect_request("/b").respond_with_response(binary)
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/t")})
    assert r.text == "status 200 OK · no content type · 12 bytes\n\nplain words\n"
    r2 = s.call("web_fetch", {"url": url(httpserver, "/b")})
    assert r2.is_error and "unsupported media type (none) (9 bytes read)" in r2.text


def test_binary_type_is_refused_without_reading_the_body(web: Any, httpserver: Any) -> None:
    """Statement 15, first half."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000
    httpserver.expect_request("/p.png").respond_with_data(png, content_type="image/png")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/p.png")})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text.startswith("unsupported media type image/png (0 bytes read): web_fetch "
                             "returns text only")
    assert "PNG" not in r.text


# --- size (statement 16) ----------------------------------------------------------------


def test_body_is_cut_at_max_bytes(web: Any, httpserver: Any) -> None:
    """Statement 16, first half: a 2 MiB body, max_bytes = 1 MiB."""
    body = b"0123456789abcdef" * (2 * 1024 * 1024 // 16)
    httpserver.expect_request("/big").respond_with_data(body, content_type="text/plain")
    s, _ = web(config={"max_bytes": 1048576})
    r = s.call("web_fetch", {"url": url(httpserver, "/big")})
    assert not r.is_error
    assert r.text.splitlines()[0] == ("status 200 OK · text/plain · 1048576 bytes · cut at "
                                      "1048576 bytes")
    assert r.meta["cut"] is True and r.meta["truncated"] is True  # the core shows head+tail
    page = s.session.results.find(r.call_id).load().decode()
    assert page.endswith("\n\n" + body[:1048576].decode())


def test_body_of_exactly_max_bytes_is_not_cut(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/exact").respond_with_data(b"x" * 2048, content_type="text/plain")
    s, _ = web(config={"max_bytes": 2048})
    r = s.call("web_fetch", {"url": url(httpserver, "/exact")})
    assert r.text.splitlines()[0] == "status 200 OK · text/plain · 2048 bytes"


def test_cut_never_splits_a_character(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/u8").respond_with_data(("é" * 2000).encode(),
                                                       content_type="text/plain; charset=utf-8")
    s, _ = web(config={"max_bytes": 1025})
    text = body_of(s.call("web_fetch", {"url": url(httpserver, "/u8")}))
    assert text == "é" * 512


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """50 MB of zeros, gzip-compressed (about 50 KB on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1024 * 1024)
    return b"".join(packer.compress(chunk) for _ in range(50)) + packer.flush()


def test_gzip_bomb_stops_at_max_bytes(web: Any, httpserver: Any, gzip_bomb: bytes) -> None:
    """Statement 16, second half."""
    httpserver.expect_request("/bomb").respond_with_data(
        gzip_bomb, content_type="text/plain", headers={"Content-Encoding": "gzip"})
    s, _ = web(config={"max_bytes": 1048576})
    started = time.monotonic()
    r = s.call("web_fetch", {"url": url(httpserver, "/bomb")})
    elapsed = time.monotonic() - started
    assert r.text.splitlines()[0] == ("status 200 OK · text/plain · 1048576 bytes · cut at "
                                      "1048576 bytes")
    assert elapsed < 5
    assert httpserver.log[0][0].headers["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize("encoding,packed", [
    ("gzip", gzip.compress(b"hello gzip", mtime=0)),  # the same test id in every process
    ("deflate", zlib.compress(b"hello gzip")),
    ("deflate", zlib.compress(b"hello gzip")[2:-4]),  # raw deflate, as some servers send it
])
def test_compressed_bodies_are_decoded(web: Any, httpserver: Any, encoding: str,
                                       packed: bytes) -> None:
    httpserver.expect_request("/z").respond_with_data(
        packed, content_type="text/plain", headers={"Content-Encoding": encoding})
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/z")})
    assert r.text == "status 200 OK · text/plain · 10 bytes\n\nhello gzip"


def test_unknown_content_encoding_is_an_error(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/br").respond_with_data(
        b"\x0b\x02\x80hi\x03", content_type="text/plain", headers={"Content-Encoding": "br"})
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/br")})
    assert r.is_error and "unsupported content encoding (br)" in r.text


# --- time (statement 17) ------------------------------------------------------------------


def test_slow_server_times_out(web: Any, httpserver: Any) -> None:
    """Statement 17: the server waits 3 s; timeout_s = 1 ends the call well before."""
    release = threading.Event()

    def slow(request: Request) -> Response:
        release.wait(3)
        return Response("late", content_type="text/plain")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    s, _ = web(config={"timeout_s": 1})
    started = time.monotonic()
    r = s.call("web_fetch", {"url": url(httpserver, "/slow")})
    elapsed = time.monotonic() - started
    release.set()
    assert r.is_error and r.error.kind == "timeout" and r.error.signature == "timeout"
    assert r.text.startswith(f"fetch {url(httpserver, '/slow')}: timed out after 1 s")
    assert elapsed < 2.5


def test_a_trickling_body_is_bounded_by_the_whole_call_timeout(web: Any,
                                                               httpserver: Any) -> None:
    """timeout_s covers the whole call: a server that keeps sending slowly is cut off."""
    stop = threading.Event()

    def trickle(request: Request) -> Response:
        def chunks() -> Any:
            for _ in range(40):
                if stop.wait(0.2):
                    return
                yield b"x"
        return Response(chunks(), content_type="text/plain")

    httpserver.expect_request("/trickle").respond_with_handler(trickle)
    s, _ = web(config={"timeout_s": 1})
    started = time.monotonic()
    r = s.call("web_fetch", {"url": url(httpserver, "/trickle")})
    stop.set()
    assert r.error is not None and r.error.kind == "timeout", r.text
    assert time.monotonic() - started < 2.5


# --- statuses (statements 18, 19) ---------------------------------------------------------


def test_error_status_is_a_normal_result(web: Any, httpserver: Any) -> None:
    """Statement 18."""
    httpserver.expect_request("/missing").respond_with_data("nope", status=404,
                                                            content_type="text/plain")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/missing")})
    assert not r.is_error
    assert r.text.startswith("status 404 Not Found · text/plain · 4 bytes")
    assert body_of(r) == "nope"


def test_no_content_is_an_empty_body(web: Any, httpserver: Any) -> None:
    """Statement 19."""
    httpserver.expect_request("/none").respond_with_response(Response(status=204))
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/none")})
    assert not r.is_error
    assert r.text.startswith("status 204 No Content")
    assert body_of(r) == "(empty body)"


def test_html_with_nothing_readable_is_an_empty_body(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/e").respond_with_data(
        "<html><head><script>x()</script></head><body> </body></html>",
        content_type="text/html")
    s, _ = web()
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/e")})) == "(empty body)"


# --- connection errors (§1.10) --------------------------------------------------------


def test_closed_port_is_a_connection_failure(web: Any) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s, _ = web()
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{port}/"})
    assert r.is_error and r.error.kind == "tool_error" and r.error.signature == "WEB_CONNECT"
    assert r.text.startswith(f"fetch http://127.0.0.1:{port}/: connection failed: ")


def test_urls_in_messages_are_cut_to_200_characters(web: Any) -> None:
    s, _ = web()
    long_url = "http://nowhere.test/" + "p" * 500
    r = s.call("web_fetch", {"url": long_url})
    shown = r.text.split(": connection failed")[0].removeprefix("fetch ")
    assert len(shown) == 200 and long_url.startswith(shown[:-1])


def test_no_cookies_are_kept_between_calls(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/set").respond_with_response(
        Response("set", content_type="text/plain", headers={"Set-Cookie": "sid=1; Path=/"}))
    httpserver.expect_request("/get").respond_with_handler(
        lambda request: Response(request.headers.get("Cookie", "no cookie"),
                                 content_type="text/plain"))
    s, _ = web()
    s.call("web_fetch", {"url": url(httpserver, "/set")})
    assert body_of(s.call("web_fetch", {"url": url(httpserver, "/get")})) == "no cookie"


def test_environment_proxies_are_ignored(web: Any, httpserver: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://10.0.0.1:3128")
    monkeypatch.setenv("ALL_PROXY", "http://10.0.0.1:3128")
    httpserver.expect_request("/direct").respond_with_data("direct", content_type="text/plain")
    s, wire = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/direct")})
    assert body_of(r) == "direct" and wire.refused == []


# --- HTTPS (statement 30) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An HTTPS loopback server whose certificate (from a test CA) names docs.test."""
    ca = trustme.CA()
    cert = ca.issue_cert("docs.test")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.start()
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    yield server, bundle
    server.clear()
    if server.is_running():
        server.stop()


def test_https_verifies_the_name_while_connecting_to_the_pinned_address(
        web: Any, tls_server: Any) -> None:
    """Statement 30, first half."""
    server, bundle = tls_server
    server.expect_request("/secure").respond_with_data("secret docs", content_type="text/plain")
    s, wire = web(config={"resolve": {"docs.test": ["127.0.0.1"]}, "ca_bundle": str(bundle)})
    r = s.call("web_fetch", {"url": f"https://docs.test:{server.port}/secure"})
    assert not r.is_error, r.text
    assert body_of(r) == "secret docs"
    assert wire.requests == [f"https://127.0.0.1:{server.port}/secure"]
    assert server.log[-1][0].headers["Host"] == f"docs.test:{server.port}"


def test_https_without_the_test_ca_fails_verification(web: Any, tls_server: Any) -> None:
    """Statement 30, second half."""
    server, _bundle = tls_server
    s, _ = web(config={"resolve": {"docs.test": ["127.0.0.1"]}})
    r = s.call("web_fetch", {"url": f"https://docs.test:{server.port}/secure"})
    assert r.is_error and r.error.signature == "WEB_TLS"
    assert r.text.startswith(f"fetch https://docs.test:{server.port}/secure: TLS verification "
                             "failed: ")


def test_https_certificate_for_another_name_fails_verification(web: Any,
                                                               tls_server: Any) -> None:
    server, bundle = tls_server
    s, _ = web(config={"resolve": {"other.test": ["127.0.0.1"]}, "ca_bundle": str(bundle)})
    r = s.call("web_fetch", {"url": f"https://other.test:{server.port}/secure"})
    assert r.is_error and "TLS verification failed" in r.text
    assert "other.test" in r.text


def test_missing_ca_bundle_is_a_clear_error(web: Any, tmp_path: Path) -> None:
    s, wire = web(config={"ca_bundle": str(tmp_path / "absent.pem")})
    r = s.call("web_fetch", {"url": "https://docs.test/"})
    assert r.is_error and "[web] ca_bundle" in r.text and "cannot be loaded" in r.text
    assert wire.transports == []


def test_deeply_nested_html_still_gives_its_text(web: Any, httpserver: Any) -> None:
    depth = 3000
    page = "<html><body>" + "<div>" * depth + "<p>deep words</p>" + "</div>" * depth
    httpserver.expect_request("/deep").respond_with_data(page, content_type="text/html")
    s, _ = web()
    r = s.call("web_fetch", {"url": url(httpserver, "/deep")})
    assert not r.is_error, r.text
    assert body_of(r) == "deep words"


def test_cancelling_the_batch_stops_reading(web: Any, httpserver: Any) -> None:
    stop = threading.Event()

    def trickle(request: Request) -> Response:
        def chunks() -> Any:
            for _ in range(50):
                if stop.wait(0.1):
                    return
                yield b"x"
        return Response(chunks(), content_type="text/plain")

    httpserver.expect_request("/trickle").respond_with_handler(trickle)
    s, _ = web(config={"timeout_s": 30})
    timer = threading.Timer(0.5, s.session.cancel)
    timer.start()
    started = time.monotonic()
    r = s.call("web_fetch", {"url": url(httpserver, "/trickle")})
    stop.set()
    timer.join()
    assert r.error is not None and r.error.kind == "cancelled", r.text
    assert time.monotonic() - started < 3
