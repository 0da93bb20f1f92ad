"""Hypothesis helpers for the reliability suite.

hypothesis-jsonschema 0.23.1 (the newest release) drives object generation with
``hypothesis.internal.conjecture.utils.many.more()``, which newer Hypothesis
releases replaced by an iterator protocol. `install_many_more` adds ``more()``
back on top of the new protocol (the same start/stop spans and continue
draws), only when it is missing, so ``from_schema`` works with the locked
Hypothesis. Remove it once hypothesis-jsonschema catches up.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import utils as cu


def install_many_more() -> None:
    if hasattr(cu.many, "more"):
        return

    def more(self: Any) -> bool:
        if self._depth is None:  # first call: what ``__enter__`` would record
            self._depth = self.data.depth
        if self._in_element:
            self._finish_element()
        if not self._decide():
            return False
        self.count += 1
        self._in_element = True
        self._rejected = False
        return True

    cu.many.more = more


def fixed(examples: int, **kwargs: Any) -> settings:
    """Settings for a counted, reproducible run: derandomized, no database, no deadline."""
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), **kwargs)
