"""The provider renderings are a library above the core (issue 31): ``callgate-providers``
registers each by name under ``callgate.renderings``; the command line, the blocking
facade and the ``callgate_session`` fixture find them there, and a bare ``callgate``
without them still lists its tools as canonical entries and says what ``--provider``
needs."""

from __future__ import annotations

import json
from pathlib import Path

import callgate_providers
import pytest
from callgate import sync
from callgate._host import renderings
from callgate.schema import contract_entry
from callgate_cli.cli import main
from callgate_providers import native


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as a bare ``callgate``: no rendering installed."""
    monkeypatch.setattr(renderings, "_installed", {})


def test_every_rendering_is_registered_in_the_order_the_library_lists_them() -> None:
    assert renderings.names() == [*callgate_providers.PROVIDERS, *native.NATIVE_PROVIDERS]
    assert renderings.names(native=True) == list(native.NATIVE_PROVIDERS)
    host = sync.Host.boot({}, surface="full")
    try:
        for name in renderings.names():
            assert renderings.rendering(name).surface(host.host) == \
                callgate_providers.surface(host.host, name)
            assert renderings.rendering(name).shows(host.host) == \
                (native.shows(host.host, name) if name in native.RENDERINGS else [])
    finally:
        host.close()


def test_canonical_entries_need_no_rendering(bare: None, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    assert main(["tools", "--json", "--surface", "full"]) == 0
    listed = json.loads(capsys.readouterr().out)
    host = sync.Host.boot({}, surface="full")
    try:
        assert listed == [contract_entry(s) for s in host.host.surface_specs()]
        assert listed == callgate_providers.surface(host.host, None)  # as the library has it
    finally:
        host.close()


def test_a_bare_core_says_which_package_renders_a_provider(
        bare: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["tools", "--provider", "anthropic"]) == 2
    assert "no provider renderings are installed (install callgate-providers" in \
        capsys.readouterr().err
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    assert main(["replay", str(transcript), "--workspace", str(tmp_path),
                 "--provider", "anthropic-native"]) == 2
    assert "install callgate-providers" in capsys.readouterr().err
    with pytest.raises(ValueError, match="install callgate-providers"):
        renderings.rendering("gemini")


def test_an_unknown_provider_names_the_installed_ones() -> None:
    with pytest.raises(ValueError, match="unknown provider 'bard'; use one of openai-chat, "):
        renderings.rendering("bard")
