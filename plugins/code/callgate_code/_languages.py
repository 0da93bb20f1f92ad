"""Which grammar reads which file: individual tree-sitter grammar wheels from PyPI (search.md §5).

Nothing is downloaded at run time and no language pack is used: each grammar
is its own installed package, imported on first use and cached. A grammar
that is not installed makes its files unindexable, and says which package
to install.
"""

from __future__ import annotations

import importlib
import threading

import attrs
from tree_sitter import Language, Parser


@attrs.frozen
class Grammar:
    """One grammar: its language label, the PyPI package, and the function that builds it."""

    label: str
    package: str
    module: str
    function: str


_PYTHON = Grammar("python", "tree-sitter-python", "tree_sitter_python", "language")
_GO = Grammar("go", "tree-sitter-go", "tree_sitter_go", "language")
_JS = Grammar("javascript", "tree-sitter-javascript", "tree_sitter_javascript", "language")
_TS = Grammar("typescript", "tree-sitter-typescript", "tree_sitter_typescript",
              "language_typescript")
_TSX = Grammar("tsx", "tree-sitter-typescript", "tree_sitter_typescript", "language_tsx")
_RUST = Grammar("rust", "tree-sitter-rust", "tree_sitter_rust", "language")
_JAVA = Grammar("java", "tree-sitter-java", "tree_sitter_java", "language")

#: File extension -> grammar.
BY_EXTENSION: dict[str, Grammar] = {
    ".py": _PYTHON, ".pyi": _PYTHON,
    ".go": _GO,
    ".js": _JS, ".jsx": _JS, ".mjs": _JS, ".cjs": _JS,
    ".ts": _TS, ".mts": _TS, ".cts": _TS,
    ".tsx": _TSX,
    ".rs": _RUST,
    ".java": _JAVA,
}

SUPPORTED = ", ".join(sorted(BY_EXTENSION))

_lock = threading.Lock()
_languages: dict[Grammar, Language | None] = {}


def extension_of(path: str) -> str:
    """The lower-cased extension of a file name, ``""`` when it has none."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def language(grammar: Grammar) -> Language | None:
    """The loaded language, or ``None`` when its package is not installed."""
    with _lock:
        if grammar not in _languages:
            try:
                module = importlib.import_module(grammar.module)
                _languages[grammar] = Language(getattr(module, grammar.function)())
            except (ImportError, AttributeError, OSError, ValueError):
                _languages[grammar] = None
        return _languages[grammar]


def parser(grammar: Grammar) -> Parser | None:
    """A fresh parser for ``grammar`` (parsers are not shared between threads)."""
    lang = language(grammar)
    return None if lang is None else Parser(lang)


def forget() -> None:
    """Drop every loaded language (tests prove loading works offline by reloading)."""
    with _lock:
        _languages.clear()
