"""The bash reaping exemption (shell.md §2): a command that backgrounds something with a
lone ``&`` *and* runs ``nohup``, ``setsid`` or ``disown`` as a command keeps what it
started; every other leftover of the process group is ended when the shell exits.

Detection is lexical (shlex in punctuation mode), not a bash parser: it only has to
tell ``nohup cmd &`` from ``echo nohup; cmd &``.
"""

from __future__ import annotations

import re
import shlex

KEEPERS = frozenset({"nohup", "setsid", "disown"})
# words after which the next word is still in command position
PREFIXES = frozenset({"command", "env", "exec", "{", "!", "then", "do", "else", "elif", "if",
                      "while", "until", "time"})
SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "(", ")", ";;", "\n"})
# bash operators, longest first, for splitting shlex's punctuation runs ("&)" is "&" + ")")
OPERATORS = ("&>>", "&&", "||", ";;", "|&", "&>", ">&", "<&", ">>", "<<", "<>", ">|",
             "&", "|", ";", "(", ")", "<", ">", "\n")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PUNCTUATION = "();<>|&\n"


def _operators(run: str) -> list[str]:
    out, i = [], 0
    while i < len(run):
        op = next(o for o in OPERATORS if run.startswith(o, i))
        out.append(op)
        i += len(op)
    return out


def _tokens(command: str) -> list[tuple[str, bool]]:
    """``(token, is_operator)`` pairs; raises ValueError on unbalanced quotes."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    out: list[tuple[str, bool]] = []
    for token in lexer:
        if token and all(c in _PUNCTUATION for c in token):
            out.extend((op, True) for op in _operators(token))
        else:
            out.append((token, False))
    return out


def keeps_background_processes(command: str) -> bool:
    """True when ``command`` has a lone ``&`` and nohup/setsid/disown in command position."""
    try:
        tokens = _tokens(command)
    except ValueError:
        return False
    lone_amp = keeper = False
    expect_command = True
    skip_word = False
    for token, is_op in tokens:
        if is_op:
            if token == "&":
                lone_amp = True
            if token in SEPARATORS:
                expect_command, skip_word = True, False
            else:  # a redirection: its next word is a file name
                skip_word = True
            continue
        if skip_word:
            skip_word = False
            continue
        if not expect_command:
            continue
        if _ASSIGNMENT.match(token) or token in PREFIXES:
            continue
        if token in KEEPERS:
            keeper = True
        expect_command = False
    return lone_amp and keeper
