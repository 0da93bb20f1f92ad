"""Regression tests for the bugs the reliability suite found (docs/reliability.md, "Fixes").

Each test names the figure that found the bug and fails on the code before its fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize("args", [{"command": "echo a\x00b"},
                                  {"command": "echo a\x00b", "run_in_background": True}])
def test_bash_command_with_a_nul_is_an_unexecuted_argument_error(
        callgate_session: Callable[..., Any], args: dict[str, Any]) -> None:
    """Argument fuzzing: a NUL in the command crashed the launch ("bash failed: embedded null
    byte") and, in the background, left a failed job behind."""
    s = callgate_session(entrypoints=["shell"])
    r = s.call("bash", args)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False, r.text
    assert "NUL" in r.text
    assert s.call("job_output", {}).text == "No background jobs in this session."


@pytest.mark.parametrize("engine", ["rg", "python"])
@pytest.mark.parametrize("args", [{"pattern": "a\x00"}, {"pattern": "a", "glob": "*\x00"}])
def test_grep_pattern_or_glob_with_a_nul_is_an_unexecuted_argument_error(
        callgate_session: Callable[..., Any], engine: str, args: dict[str, Any]) -> None:
    """Argument fuzzing: ``grep failed: embedded null byte`` (rg takes both as arguments)."""
    s = callgate_session(entrypoints=["search"], files={"a.txt": "alpha\n"},
                         config={"search": {"grep_engine": engine}})
    r = s.call("grep", args)
    assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False, r.text
    assert "NUL" in r.text


@pytest.mark.parametrize("address", ["192.0.0.91", "192.0.0.255", "64:ff9b:1::a00:1",
                                     "fec0::1"])
def test_web_guard_refuses_special_blocks_older_pythons_call_global(
        callgate_session: Callable[..., Any], address: str) -> None:
    """Network guard: on Python before 3.11.10 / 3.12.4 (CVE-2024-4032) ``ipaddress`` calls
    most of 192.0.0.0/24 and the local-use NAT64 block global, so web_fetch fetched them;
    site-local fec0::/10 is global to every version."""
    from callgate_web import WebPlugin

    from .test_network_guard import FakeInternet

    internet = FakeInternet()
    plugin = WebPlugin(resolver=lambda host: [address], transport=lambda tls: internet)
    s = callgate_session(plugins=[plugin])
    r = s.call("web_fetch", {"url": "http://special.test/"})
    assert r.is_error and r.error.signature == "WEB_REFUSED_ADDRESS", r.text
    assert "(non-global)" in r.text
    assert internet.requests == 0


@pytest.mark.parametrize("address", ["192.0.0.9", "192.0.0.10", "8.8.8.8"])
def test_web_guard_still_fetches_global_addresses_next_to_those_blocks(
        callgate_session: Callable[..., Any], address: str) -> None:
    from callgate_web import WebPlugin

    from .test_network_guard import FakeInternet

    internet = FakeInternet()
    plugin = WebPlugin(resolver=lambda host: [address], transport=lambda tls: internet)
    s = callgate_session(plugins=[plugin])
    r = s.call("web_fetch", {"url": "http://public.test/"})
    assert not r.is_error and r.text.endswith("public"), r.text


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_grep_skips_files_over_its_size_limit_without_reading_them(
        callgate_session: Callable[..., Any], engine: str) -> None:
    """Resource bombs: grep held a whole matching line (rg's JSON) or a whole file (Python
    engine) in memory: ~3 GB of host memory for a 1 GB single-line file. Files over
    ``search.max_file_bytes`` are now skipped by both engines alike, and one named in
    ``path`` says so without being read."""
    s = callgate_session(entrypoints=["search"],
                         files={"big.txt": "needle " + "x" * 5000, "small.txt": "needle\n"},
                         config={"search": {"grep_engine": engine, "max_file_bytes": 4096}})
    assert s.call("grep", {"pattern": "needle"}).text == "small.txt:1:needle"
    r = s.call("grep", {"pattern": "needle", "path": "big.txt"})
    assert r.text == ("(no matches; big.txt is larger than the 4096 bytes grep limit; "
                      "search it with the shell or raise search.max_file_bytes)")
    exact = callgate_session(entrypoints=["search"], files={"f.txt": "needle\n" + "x" * 4089},
                             config={"search": {"grep_engine": engine,
                                                "max_file_bytes": 4096}})
    assert exact.call("grep", {"pattern": "needle"}).text == "f.txt:1:needle"  # at the limit
