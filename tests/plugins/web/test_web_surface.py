"""web_fetch's place in the host: hidden (reached through use_capability in lean mode),
read-only, and permission-checked by the URL as given (web-and-media.md §1, host.md §6)."""

from __future__ import annotations

from typing import Any

import callgate_capability
from werkzeug import Response


def test_contract_flags(web: Any) -> None:
    s, _ = web()
    spec = s.host.host.registry.get("web_fetch")
    assert spec.contract_read_only and spec.visibility == "hidden"
    assert spec.permission_subject.kind == "url"
    assert spec.permission_subject.arguments == ("url",)
    assert spec.schema["additionalProperties"] is False
    assert spec.schema["properties"]["url"]["maxLength"] == 2048


def test_lean_surface_reaches_web_fetch_through_use_capability(web: Any,
                                                               httpserver: Any) -> None:
    httpserver.expect_request("/x").respond_with_data("via capability",
                                                      content_type="text/plain")
    s, _ = web(surface="lean", extra_plugins=[callgate_capability])
    assert "web_fetch" not in s.session.tool_names()
    url = f"http://127.0.0.1:{httpserver.port}/x"
    direct = s.call("web_fetch", {"url": url})
    assert direct.is_error and direct.error.kind == "unavailable"
    assert httpserver.log == []
    r = s.call("use_capability", {"action": "call", "capability_id": "tool:web_fetch",
                                  "arguments": {"url": url}})
    assert not r.is_error, r.text
    assert r.text.endswith("\n\nvia capability")
    bad = s.call("use_capability", {"action": "call", "capability_id": "tool:web_fetch",
                                    "arguments": {"url": "file:///etc/passwd"}})
    assert bad.error.kind == "invalid_arguments" and "http(s)" in bad.text
    assert "use_capability.arguments" in bad.text


def test_deny_rule_on_the_url_blocks_before_any_lookup(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/x").respond_with_data("fine", content_type="text/plain")
    s, wire = web(more_config={"permissions": {"deny": ["web_fetch(http://127.0.0.1:*/secret*)",
                                                        "web_fetch(https://*)"]}})
    blocked = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/secret/a"})
    assert blocked.is_error and blocked.error.kind == "blocked"
    https = s.call("web_fetch", {"url": "https://docs.test/"})
    assert https.is_error and https.error.kind == "blocked"
    assert wire.transports == [] and wire.resolver.calls == []
    allowed = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/x"})
    assert not allowed.is_error, allowed.text


def test_plan_mode_allows_web_fetch(web: Any, httpserver: Any) -> None:
    httpserver.expect_request("/x").respond_with_response(
        Response("read only", content_type="text/plain"))
    s, _ = web()
    s.session.set_mode("plan")
    r = s.call("web_fetch", {"url": f"http://127.0.0.1:{httpserver.port}/x"})
    assert r.text.endswith("read only"), r.text
