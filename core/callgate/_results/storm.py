"""The storm breaker: a soft convergence hint after three equivalent failed batches.

Advisory only (host.md §4): no lockout, no retry, no rewriting of earlier
results. A batch counts once however many calls it has; any success resets.

Two failed batches are equivalent when they hold the same calls in the same
order, each with the same tool, the same arguments (compared by a canonical
fingerprint: key order, whitespace and JSON-text-vs-object do not matter) and
the same error signature. Three different missing files, or ``false`` then
``test -f x`` then ``grep -q y``, are three different steps, so the hint that
says "this same step" is only ever given when it is true.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from .._model.values import ToolResult

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


def arguments_fingerprint(arguments: Any) -> str | None:
    """A canonical fingerprint of a call's arguments (``None``: they cannot be encoded,
    e.g. nested too deeply; such a call never equals another)."""
    value = arguments
    if isinstance(arguments, str | bytes):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            value = {"<text>": arguments if isinstance(arguments, str) else arguments.hex()}
    if value is None:
        value = {}
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr
        )
    except (ValueError, TypeError, RecursionError):
        return None
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


class StormBreaker:
    """Tracks the streak of equivalent all-failed batches of one session."""

    def __init__(self) -> None:
        self._signature: tuple[tuple[Any, ...], ...] | None = None
        self.streak = 0

    def observe(
        self, results: Sequence[ToolResult], arguments: Sequence[Any] | None = None
    ) -> str | None:
        """Record a batch outcome (its results and, in the same order, the arguments each
        call was sent with); return the hint to append to its first result, if due."""
        for r in results:  # a loop, not all(genexpr): this runs on every batch
            if not (r.is_error and r.error):
                self._signature, self.streak = None, 0
                return None
        if not results:
            self._signature, self.streak = None, 0
            return None
        fingerprints: list[Any] = (
            [arguments_fingerprint(a) for a in arguments]
            if arguments is not None
            else [""] * len(results)
        )
        # A call whose arguments have no fingerprint equals nothing, not even itself.
        fingerprints = [fp if fp is not None else object() for fp in fingerprints]
        sig = tuple(
            (r.name or "", r.error.signature, fp)
            for r, fp in zip(results, fingerprints, strict=True)
            if r.error
        )
        if sig == self._signature:
            self.streak += 1
        else:
            self._signature, self.streak = sig, 1
        if self.streak == STORM_THRESHOLD:
            first = results[0].error
            return hint_for(first.kind if first else "")
        return None
