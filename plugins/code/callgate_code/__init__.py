"""callgate's code tools: ``code_index`` and ``delete_symbol``, built on tree-sitter.

- ``code_index`` outlines or searches the symbols of Python, Go, JavaScript,
  TypeScript, Rust and Java files. Each grammar is its own PyPI wheel
  (``tree-sitter-python``, ``tree-sitter-go``, ...): nothing is downloaded at
  run time, and a missing wheel only makes its files unindexable. Directory
  walks skip what grep skips (the shared walker, ``callgate_toolkit.walk``).
- ``delete_symbol`` removes one Go or Python definition with its doc comment
  or decorators, behind the host's observation gate, and returns a diff.

Entry point (``pyproject.toml``): ``[project.entry-points.callgate] code = "callgate_code"``.
"""

from typing import TYPE_CHECKING, Any

from .plugin import callgate_register_tools

if TYPE_CHECKING:
    from ._languages import BY_EXTENSION, SUPPORTED, Grammar
    from ._symbols import Parsed, parse
    from ._syntax import Symbol

#: imported on first use: tree-sitter and the grammars are no part of registering (issue 38)
_LAZY = {"BY_EXTENSION": "_languages", "SUPPORTED": "_languages", "Grammar": "_languages",
         "Parsed": "_symbols", "parse": "_symbols", "Symbol": "_syntax"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = ["BY_EXTENSION", "SUPPORTED", "Grammar", "Parsed", "Symbol",
           "callgate_register_tools", "parse"]
