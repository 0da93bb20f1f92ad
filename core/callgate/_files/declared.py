"""The ``[files] encodings`` table: which files are declared to have which encoding.

``encodings = {"legacy/**" = "cp1251", "docs/*.txt" = "latin-1"}`` maps path globs
(the permission rules' globs: ``*`` and ``?`` stay within one component, ``**``
crosses ``/``; relative globs match workspace-relative paths, absolute ones absolute
paths) to encodings; when several match, the last one in the table wins (as in
``.gitattributes``). A declaration is trusted over detection and over the file's own
coding line; only a BOM beats it. Every decoding of a file in the core and in the files
tools goes through `declared_for`, so a window, an edit and a stale-edit detail of one
file always agree.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._permissions.rules import RuleError, _path_forms, compile_spec
from .._text.textio import Declaration

if TYPE_CHECKING:
    from .._session.session import Session

_Rules = tuple[tuple[str, Callable[[str], bool] | None, str], ...]


@functools.lru_cache(maxsize=16)
def _compile(items: tuple[tuple[str, str], ...]) -> _Rules:
    out = []
    for pattern, codec in items:
        try:
            matcher: Callable[[str], bool] | None = compile_spec("path", pattern)
        except RuleError:
            matcher = None
        out.append((pattern, matcher, codec))
    return tuple(out)


def encoding_rules(mapping: Mapping[str, Any] | None) -> _Rules:
    """The compiled ``[files] encodings`` table (cached by its content)."""
    if not mapping:
        return ()
    return _compile(tuple((str(k), str(v)) for k, v in mapping.items()))


def declared_in(rules: _Rules, path: str, root: str | None) -> Declaration | None:
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


def declared_for(session: Session, path: str) -> Declaration | None:
    """The ``[files] encodings`` declaration for canonical ``path`` in ``session``."""
    mapping = session.host.plugin_config_value("files", "encodings", None)
    rules = encoding_rules(mapping)
    if not rules:
        return None
    return declared_in(rules, path, session.workspace.root)
