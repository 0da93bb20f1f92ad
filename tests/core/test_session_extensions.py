"""Typed session extensions (issue 31): a plugin names its per-session object with a
`callgate.SessionKey` and reads it with ``session.extension(key)``, typed; there is no
``session.<name>`` attribute lookup any more."""

from __future__ import annotations

from typing import Any

import pytest
from callgate import Host, Registry, SessionKey, ToolContext, ToolSpec, hookimpl
from callgate.host import BootError


class Tally:
    """A per-session counter."""

    made = 0

    def __init__(self, session: Any) -> None:
        Tally.made += 1
        self.session_id = session.id
        self.count = 0


TALLY: SessionKey[Tally] = SessionKey("tally")
OTHER: SessionKey[Any] = SessionKey("not_added_by_anyone")


def bump(ctx: ToolContext, args: dict[str, Any]) -> str:
    tally = ctx.session.extension(TALLY)
    tally.count += 1
    return str(tally.count)


class Counting:
    __name__ = "counting"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.add_session_extension(TALLY, Tally)
        registry.add(ToolSpec(name="bump", description="Count.", schema={"type": "object"},
                              execute=bump))


def test_an_extension_is_made_once_per_session_on_first_use(callgate_session: Any) -> None:
    Tally.made = 0
    s = callgate_session([Counting()])
    assert Tally.made == 0
    assert [s.call("bump", {}).text for _ in range(3)] == ["1", "2", "3"]
    assert Tally.made == 1 and s.session.extension(TALLY).session_id == s.session.id
    # a key of the same name is the same key (another plugin may read it without an import)
    assert s.session.extension(SessionKey("tally")) is s.session.extension(TALLY)
    other = callgate_session([Counting()])
    assert other.call("bump", {}).text == "1"


def test_an_extension_no_plugin_adds_is_a_lookup_error_or_none(callgate_session: Any) -> None:
    s = callgate_session([Counting()])
    with pytest.raises(LookupError, match="not_added_by_anyone"):
        s.session.extension(OTHER)
    assert s.session.find_extension(OTHER) is None
    with pytest.raises(AttributeError):
        s.session.tally  # noqa: B018  (no attribute lookup of extensions)


@pytest.mark.parametrize("key", ["tally", SessionKey("tally")])
def test_a_name_is_no_key_and_a_key_is_added_once(key: Any) -> None:
    class Again:
        __name__ = "again"

        @hookimpl
        def callgate_register_tools(self, registry: Registry) -> None:
            registry.add_session_extension(key, Tally)

    plugins = [Again()] if isinstance(key, str) else [Counting(), Again()]
    message = "is named by a callgate.SessionKey" if isinstance(key, str) else \
        "'tally' is added twice"
    with pytest.raises(BootError, match=message):
        Host.boot({}, plugins=plugins, entrypoints=False)


def test_a_key_name_is_an_identifier() -> None:
    with pytest.raises(ValueError):
        SessionKey("Not a name")
