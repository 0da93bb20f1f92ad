""" "Did you mean" for an unknown tool name: only names the session can really use.

A suggestion the model follows must work, and must mean what the model meant. So
the pool is the tools this session can call by name (its visible surface and the
aliases), and, when the session has a proxy (a tool with a `ProxyRoute`), the
hidden tools it reaches through it, suggested in the proxy's own words; a name
the proxy reaches exactly beats a direct name that is merely spelled alike
(``task`` → the hidden ``task``, never ``ask``).

A name is close when it is, in order:

- the same name in another case or spelling of separators (``Read_File``,
  ``readfile``);
- a name other agents give the same tool (each tool's `ToolSpec.known_as`:
  ``shell`` or, on Windows, ``bash`` → the shell tool there is; ``str_replace``
  → ``edit_file``). A known name whose tool this session lacks suggests nothing
  rather than a look-alike (``agent`` without a subagent tool is not ``ask``);
- a close spelling: ratio 0.75 or more with the same first letter, or 0.9 or
  more (``read_fil`` → ``read_file``);
- the word extending a name (``grep_search`` → ``grep``), never the reverse: a
  longer name is another tool (``bash`` is not ``bash_output``).

``nope_tool`` suggests nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

CUTOFF = 0.75
CUTOFF_ANY_START = 0.9
MAX_SUGGESTIONS = 3
MIN_PREFIX = 4

Meanings = Mapping[str, tuple[str, ...]]


def _key(name: str) -> str:
    """``name`` as compared: lowercase, without ``_``, ``-``, ``.`` or spaces."""
    return "".join(ch for ch in name.lower() if ch not in "_-. ")


def meanings_of(specs: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """``{compared name: tools}`` from the tools' `ToolSpec.known_as` (pass every tool the
    host registers, so a known name of a tool missing here suggests nothing)."""
    found: dict[str, list[str]] = {}
    for spec in specs:
        for other in getattr(spec, "known_as", ()):
            names = found.setdefault(_key(other), [])
            if spec.name not in names:
                names.append(spec.name)
    return {key: tuple(names) for key, names in found.items()}


def close_names(word: str, pool: Iterable[str], meanings: Meanings | None = None) -> list[str]:
    """Up to `MAX_SUGGESTIONS` names of ``pool`` close to ``word``, best first (see the
    module's docstring for what counts as close)."""
    names = sorted(set(pool))
    keyed: dict[str, str] = {}
    for name in names:
        keyed.setdefault(_key(name), name)
    key = _key(word)
    if not key:
        return []
    if key in keyed:
        return [keyed[key]]
    meant = meanings.get(key) if meanings else None
    if meant is not None:  # a name we know: its tools here, or nothing (not a look-alike)
        return [n for n in meant if n in names][:MAX_SUGGESTIONS]
    found: list[str] = []
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key)
    scored = []
    for low, name in keyed.items():
        matcher.set_seq1(low)
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= CUTOFF_ANY_START or (ratio >= CUTOFF and low[0] == key[0]):
            scored.append((-ratio, name))
    found = [name for _, name in sorted(scored)][:MAX_SUGGESTIONS]
    if not found and len(key) > MIN_PREFIX:
        found = [n for low, n in keyed.items() if len(low) >= MIN_PREFIX and key.startswith(low)][
            :MAX_SUGGESTIONS
        ]
    return found


def did_you_mean(
    word: str,
    callable_names: Iterable[str],
    reachable_names: Iterable[str] = (),
    via: str | None = None,
    meanings: Meanings | None = None,
) -> str:
    """``"; did you mean …?"`` naming callable tools, then hidden ones as calls through the
    proxy (``via``: `ProxyRoute.hidden_tool`, a template of ``{name}``); ``""`` when nothing
    is close enough. A hidden tool of exactly that name wins over direct look-alikes."""
    callable_names = list(callable_names)
    reachable = set(reachable_names) - set(callable_names) if via is not None else set()
    exact_hidden = [n for n in reachable if _key(n) == _key(word)]
    if exact_hidden:
        direct, hidden = [], exact_hidden[:1]
    else:
        direct = close_names(word, callable_names, meanings)
        exact = bool(direct) and _key(direct[0]) == _key(word)
        hidden = (
            [] if exact or not reachable else close_names(word, reachable - set(direct), meanings)
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


__all__ = ["close_names", "did_you_mean", "meanings_of"]
