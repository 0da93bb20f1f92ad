"""callgate-commandline: what a shell command line would run, known without running it.

A library (not a plugin: no entry point, no tools) that the shell plugin depends on and
registers at boot; any plugin may import it.

- `analyze_command` parses a bash line with a real grammar (tree-sitter-bash; PowerShell
  with a quote-aware splitter) into a `CommandLine`: every command it would run
  (`Command`: through wrappers, launchers, ``bash -c`` scripts, substitutions, and
  ``git`` without its global options), its redirections (`Redirection`), and what could
  not be decided statically.
- `readonly_command` is the strict read-only classifier: ``None`` for a line that only
  reads (an allow-list of programs and their exact options), else why not.
- `parse_git` reads a git command line the way git does (`GitLine`).
- `COMMAND` is the ``command`` permission subject kind
  (`callgate.permissions.SubjectKind`) built on them: ``Bash(git push:*)`` rules,
  undecidable lines matching every deny and ask rule, redirections judged by ``Edit``
  rules, and the read-only verdict.

A policy aid, not a boundary: a program can run anything it likes; the sandbox is the
boundary.
"""

from typing import TYPE_CHECKING
from typing import Any as _Any

from ._subject import COMMAND

if TYPE_CHECKING:
    from ._analyze import (
        Command,
        CommandLine,
        Redirection,
        analyze_command,
        normalize,
        suggested_prefix,
    )
    from ._git import GitLine, parse_git
    from ._readonly import readonly_command

#: imported on first use: the analysis and its tables are no part of registering the
#: ``command`` subject kind, which is what a shell plugin does at boot (issue 38)
_LAZY = {"Command": "_analyze", "CommandLine": "_analyze", "Redirection": "_analyze",
         "analyze_command": "_analyze", "normalize": "_analyze",
         "suggested_prefix": "_analyze", "GitLine": "_git", "parse_git": "_git",
         "readonly_command": "_readonly"}

__all__ = [
    "COMMAND",
    "Command",
    "CommandLine",
    "GitLine",
    "Redirection",
    "analyze_command",
    "normalize",
    "parse_git",
    "readonly_command",
    "suggested_prefix",
]


def __getattr__(name: str) -> _Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'callgate_commandline' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
