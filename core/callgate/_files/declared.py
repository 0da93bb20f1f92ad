"""The ``[files] encodings`` table: which files are declared to have which encoding.

``encodings = {"legacy/**" = "cp1251", "docs/*.txt" = "latin-1"}`` maps path globs
(the permission rules' globs: ``*`` and ``?`` stay within one component, ``**``
crosses ``/``; relative globs match workspace-relative paths, absolute ones absolute
paths) to encodings; when several match, the last one in the table wins (as in
``.gitattributes``). A declaration is trusted over detection and over the file's own
coding line; only a BOM beats it. Every decoding of a file in the core and in the files
tools goes through `FileScope.declared` (`declaration`), so a window, an edit and a stale-edit
detail of one file always agree.

Two more things can settle a file's encoding (issue 36): the model, for the version it
read, with read_file's ``encoding`` argument (kept in the observation ledger, so it holds
exactly while that version is the one observed, and for the versions the session's own
edits write); and the user's ``[files] fallback_encodings``, tried in order for a file
that is not UTF-8 and declares nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from .._permissions.rules import RuleError, _path_forms, compile_spec
from .._text.charset import usable_codec
from .._text.textio import CHOSEN_ORIGIN, Declaration

#: the compiled table: ``(pattern, matcher or None for an invalid glob, codec)`` in order
Rules = tuple[tuple[str, Callable[[str], bool] | None, str], ...]


@functools.lru_cache(maxsize=16)
def _compile(items: tuple[tuple[str, str], ...]) -> Rules:
    out = []
    for pattern, codec in items:
        try:
            matcher: Callable[[str], bool] | None = compile_spec("path", pattern)
        except RuleError:
            matcher = None
        out.append((pattern, matcher, codec))
    return tuple(out)


def encoding_rules(mapping: Mapping[str, Any] | None) -> Rules:
    """The compiled ``[files] encodings`` table (cached by its content)."""
    if not mapping:
        return ()
    return _compile(tuple((str(k), str(v)) for k, v in mapping.items()))


def declared_in(rules: Rules, path: str, root: str | None) -> Declaration | None:
    """The declaration the last matching rule makes for canonical ``path``, or ``None``.

    A pattern that is not a valid glob matches nothing (and is named by read_file's
    note only if it is the one that applies, which it never is).
    """
    if not rules:
        return None
    forms = _path_forms(os.path.normpath(path), root)
    for pattern, matcher, codec in reversed(rules):
        if matcher is not None and any(matcher(form) for form in forms):
            return Declaration(codec, f'[files] encodings "{pattern}"')
    return None


def declaration(
    found: Declaration | None, chosen: str | None, fallbacks: tuple[str, ...]
) -> Declaration | None:
    """What is declared about one file's encoding: ``found`` (its ``[files] encodings``
    entry), else ``chosen`` (the encoding the model settled for the version being decoded,
    `ObservationLedger`'s ``Present.encoding``), with the user's ``[files]
    fallback_encodings``; ``None`` when nothing is."""
    if found is None and chosen:
        found = Declaration(chosen, CHOSEN_ORIGIN)
    if fallbacks:
        found = Declaration(found.codec if found else "", found.origin if found else "", fallbacks)
    return found


def fallback_problem(name: str) -> str | None:
    """Why ``[files] fallback_encodings`` cannot hold ``name``, or ``None`` (checked at boot)."""
    codec, why = usable_codec(name)
    if codec is None:
        return f"{why}; list encodings callgate can edit (gb18030, cp1251, shift_jis, ...)"
    if codec.startswith("utf-16"):
        return (
            f'"{name}": UTF-16 is found by its own bytes, never as a fallback; list '
            "legacy encodings (gb18030, cp1251, shift_jis, ...)"
        )
    return None
