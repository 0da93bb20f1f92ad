"""The renderings this package registers under the ``callgate.renderings`` entry points
(`callgate`'s command line, ``sync.Session.run_items`` and the ``callgate_session``
fixture find them there): one object per rendering name, in the order
``callgate tools --provider`` lists them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from . import base, native


@attrs.frozen
class RegisteredRendering:
    """One rendering, as `callgate`'s core asks for it (``callgate._host.renderings``)."""

    name: str
    native: bool
    position: int

    def surface(self, source: Any) -> list[dict[str, Any]]:
        from . import surface

        return surface(source, self.name)

    def shows(self, host: Any) -> list[str]:
        return native.shows(host, self.name) if self.native else []

    async def run_items(self, session: Any, items: Sequence[Any]) -> list[Any]:
        if not self.native:
            raise ValueError(
                f"{self.name} is not a native rendering; use one of "
                f"{', '.join(native.NATIVE_PROVIDERS)}"
            )
        return await native.run_items(session, self.name, items)


_ALL = [
    RegisteredRendering(name, name in native.RENDERINGS, position)
    for position, name in enumerate((*base.PROVIDERS, *native.NATIVE_PROVIDERS))
]
BY_NAME = {r.name: r for r in _ALL}

openai_chat = BY_NAME["openai-chat"]
openai_chat_strict = BY_NAME["openai-chat-strict"]
openai_responses = BY_NAME["openai-responses"]
anthropic = BY_NAME["anthropic"]
gemini = BY_NAME["gemini"]
mcp = BY_NAME["mcp"]
anthropic_native = BY_NAME["anthropic-native"]
openai_responses_native = BY_NAME["openai-responses-native"]
openai_chat_freeform = BY_NAME["openai-chat-freeform"]
