"""Argument substitution in prompt templates (skills, slash commands): ``$ARGUMENTS``,
``$1``..``$9``, ``$$``, as Claude Code's custom commands use them. A library because the
skills and commands plugins both expand them and plugins never import each other.

One pass, left to right, so a substituted value is never substituted again:
``$ARGUMENTS`` is the whole argument string, ``$1``..``$9`` its words (split like a
shell line: quotes group words; an unbalanced quote falls back to whitespace), a
missing word is empty, and ``$$`` is a literal ``$``.
"""

from __future__ import annotations

import re
import shlex

_TOKEN = re.compile(r"\$(\$|ARGUMENTS|[1-9])")


def split_arguments(arguments: str) -> list[str]:
    """The words of ``arguments``, split like a shell line (whitespace if a quote is open)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def has_placeholders(text: str) -> bool:
    """Whether ``text`` holds any placeholder (``$$`` included)."""
    return _TOKEN.search(text) is not None


def substitute_arguments(text: str, arguments: str) -> str:
    """``text`` with its placeholders replaced by ``arguments``."""
    words = split_arguments(arguments)

    def one(match: re.Match[str]) -> str:
        token = match.group(1)
        if token == "$":
            return "$"
        if token == "ARGUMENTS":
            return arguments
        index = int(token) - 1
        return words[index] if index < len(words) else ""

    return _TOKEN.sub(one, text)
