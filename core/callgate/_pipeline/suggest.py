""" "Did you mean" for an unknown tool name: only names the session can really use.

A suggestion the model follows must work. So the pool is the tools this session
can call by name (its visible surface and the aliases), and, when the session
has a proxy (a tool with a `ProxyRoute`), the hidden tools it reaches through
it, suggested in the proxy's own words. Matching is stricter than difflib's
default: a case-insensitive equal name, a close spelling (ratio 0.75 or more),
or one name extending the other (``grep_search`` → ``grep``); ``nope_tool``
suggests nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75
MAX_SUGGESTIONS = 3
MIN_PREFIX = 4


def close_names(word: str, pool: Iterable[str]) -> list[str]:
    """Up to `MAX_SUGGESTIONS` names of ``pool`` close to ``word``, best first."""
    names = sorted(set(pool))
    lowered = {n.lower(): n for n in names}
    key = word.lower()
    if key in lowered:
        return [lowered[key]]
    found = [
        lowered[m]
        for m in difflib.get_close_matches(key, list(lowered), n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    ]
    if not found and len(key) >= MIN_PREFIX:
        found = [
            n
            for low, n in lowered.items()
            if len(low) >= MIN_PREFIX and (key.startswith(low) or low.startswith(key))
        ][:MAX_SUGGESTIONS]
    return found


def did_you_mean(
    word: str,
    callable_names: Iterable[str],
    reachable_names: Iterable[str] = (),
    via: str | None = None,
) -> str:
    """``"; did you mean …?"`` naming callable tools, then hidden ones as calls through the
    proxy (``via``: `ProxyRoute.hidden_tool`, a template of ``{name}``); ``""`` when nothing
    is close enough."""
    direct = close_names(word, callable_names)
    hidden = (
        []
        if via is None or (direct and direct[0].lower() == word.lower())
        else close_names(word, set(reachable_names) - set(direct))
    )
    parts = list(direct[:MAX_SUGGESTIONS])
    parts += [via.format(name=n) for n in hidden[: MAX_SUGGESTIONS - len(parts)] if via is not None]
    if not parts:
        return ""
    return (
        "; did you mean "
        + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1])
        + "?"
    )


__all__ = ["close_names", "did_you_mean"]
