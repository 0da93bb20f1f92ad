"""``session.extension(MEMORY)``: `SessionMemory`, with ``prompt()`` and ``recall(text, limit)``.

The integrator's side of memory: the text to put in the system prompt (a short
protocol and the pinned facts), and the facts relevant to a user's message, to add to
that turn. Both read the same stores as the tools, through the same kept index.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from ._fact import Fact
from ._places import store_dirs
from ._render import PROTOCOL, render_pinned, render_recall
from ._store import MemoryStore

#: Hits scoring below this share of the best one are not recalled (they matched a stray word).
RECALL_CUTOFF = 0.15


@attrs.frozen
class Recall:
    """Facts relevant to a message, best first, and ``text``: them as a data block ("" if none)."""

    facts: tuple[Fact, ...]
    text: str




class SessionMemory:
    """One session's memory: its two stores, found from the config and the workspace."""

    def __init__(self, session: Any) -> None:
        config = session.host.config("memory")
        self.directories = store_dirs(config, session.workspace.root)
        self.store = MemoryStore(self.directories, config.get("max_fact_bytes", 8192))

    def prompt(self) -> str:
        """The system-prompt text: the memory protocol, then every pinned, unexpired fact."""
        pinned = [f for f in self.store.visible(now=time.time()) if f.pinned]
        block = render_pinned(pinned)
        return PROTOCOL + ("\n\n" + block if block else "")

    def recall(self, text: str, limit: int = 5) -> Recall:
        """The unpinned facts most relevant to ``text`` (pinned ones are in the prompt)."""
        limit = max(1, min(int(limit), 20))
        hits = [h for h in self.store.search(text, now=time.time(), limit=limit + 20)
                if not h.fact.pinned]
        if hits:
            best = hits[0].score
            hits = [h for h in hits if h.score >= best * RECALL_CUTOFF][:limit]
        facts = tuple(h.fact for h in hits)
        return Recall(facts, render_recall(facts))
