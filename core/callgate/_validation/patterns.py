"""Schema ``pattern`` matching under a time budget.

A tool schema's ``pattern`` is applied to whatever the model sends, and a
schema from an MCP server is not ours to trust: ``^(a+)+$`` against forty
``a``s and a ``b`` backtracks for minutes in Python's ``re``. Every pattern a
schema holds is therefore matched with the ``regex`` module (``re``'s syntax,
plus a ``timeout``) inside a budget shared by one argument check: once it is
spent, further matches fail at once with `PatternTimeout`, so a call with a
thousand pathological strings costs the budget once, not a thousand times.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: Seconds of pattern matching one argument check may spend.
PATTERN_BUDGET_S = 0.25

_deadline: ContextVar[float | None] = ContextVar("callgate_pattern_deadline", default=None)


class PatternTimeout(Exception):
    """Matching did not finish within the budget: the value is undecided, not valid."""


@contextmanager
def pattern_budget(seconds: float = PATTERN_BUDGET_S) -> Iterator[None]:
    """Share one budget among every match made inside the block (nested blocks keep
    the outer, earlier deadline)."""
    outer = _deadline.get()
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled by the ``regex`` module (raises ``regex.error``)."""
    import regex

    return regex.compile(pattern)


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's ``pattern``)."""
    deadline = _deadline.get()
    remaining = PATTERN_BUDGET_S if deadline is None else deadline - time.monotonic()
    if remaining <= 0:
        raise PatternTimeout(pattern)
    try:
        return compiled(pattern).search(text, timeout=remaining) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None


__all__ = ["PATTERN_BUDGET_S", "PatternTimeout", "compiled", "pattern_budget", "search"]
