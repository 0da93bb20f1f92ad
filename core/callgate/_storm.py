"""The storm breaker: a soft convergence hint after three equivalent failed batches.

Advisory only (host.md §4): no lockout, no retry, no rewriting of earlier
results. A batch counts once however many calls it has; any success resets.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import ToolResult

STORM_THRESHOLD = 3

_HINTS = {
    "invalid_arguments": (
        "[convergence hint] This same step has now failed three times in a row with invalid "
        "arguments. Compare your arguments with the violations above and change what they "
        "name; if you cannot produce valid arguments, stop retrying and tell the user that "
        "tool argument generation failed and what remains unfinished."
    ),
    "blocked": (
        "[convergence hint] This same step has now been blocked three times in a row. "
        "Retrying will not lift the block: choose a different step that the rules allow, or "
        "tell the user what was blocked and what remains unfinished."
    ),
    "config_error": (
        "[convergence hint] This same step has now failed three times because of a host "
        "configuration problem. Retrying will not help and the arguments are not at fault: "
        "tell the user which tool is misconfigured and what remains unfinished."
    ),
}
_DEFAULT_HINT = (
    "[convergence hint] This same step has now failed three times in a row. Say what you "
    "will change before trying again, or tell the user what could not be done and what "
    "remains unfinished."
)


def hint_for(kind: str) -> str:
    return _HINTS.get(kind, _DEFAULT_HINT)


class StormBreaker:
    """Tracks the streak of equivalent all-failed batches of one session."""

    def __init__(self) -> None:
        self._signature: tuple[tuple[str, str], ...] | None = None
        self.streak = 0

    def observe(self, results: Sequence[ToolResult]) -> str | None:
        """Record a batch outcome; return the hint to append to its first result, if due."""
        if not results or not all(r.is_error and r.error for r in results):
            self._signature, self.streak = None, 0
            return None
        sig = tuple((r.name or "", r.error.signature) for r in results if r.error)
        if sig == self._signature:
            self.streak += 1
        else:
            self._signature, self.streak = sig, 1
        if self.streak == STORM_THRESHOLD:
            first = results[0].error
            return hint_for(first.kind if first else "")
        return None
