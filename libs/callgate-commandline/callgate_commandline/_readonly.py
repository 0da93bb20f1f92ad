"""Which shell command lines are read-only: the classifier strict read-only children use.

`readonly_command` parses the line with the permission engine's bash grammar
(`analyze_command`, tree-sitter-bash) and accepts it only when everything
is decided, no redirection writes a file, and every command it would run is an
allow-listed program given only allow-listed options (`_readonly_options`,
`_readonly_git`): exact option names (an abbreviation such as ``--outp`` is refused),
no variable set for the command (``GIT_DIR=x git``, ``env A=1 cmd``), no wrapper but
``timeout``, ``nice``, ``command``, ``builtin``, ``xargs`` and ``find -exec``, and no
word computed at run time (an expansion, a glob, what ``xargs`` appends) given to a
program one argument could make write or run something (``sort --compress-program``).
Whatever the parser cannot decide is refused, never guessed. PowerShell lines are
refused (no classifier for them yet).

This judges the line, not the programs' behaviour. Where the sandbox works, a strict
read-only child's commands also see the workspace read-only (the boundary); without
it this allow-list alone decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._analyze import Command, analyze_command
from ._git import parse_git
from ._readonly_git import ACTIONS, LISTERS, SUBCOMMANDS
from ._readonly_options import (
    FIND_EXEC,
    FIND_FLAGS,
    FIND_LEADING,
    LAUNCHERS,
    PROGRAMS,
    Options,
    find_valued,
)

OTHER_USERS = frozenset({"sudo", "su", "doas", "runuser", "pkexec"})
_NUMERIC = re.compile(r"^-\d+$")


def readonly_command(text: str, dialect: str = "posix") -> str | None:
    """``None`` when ``text`` is read-only, else why not (one short clause)."""
    if dialect != "posix":
        return f"{dialect} command lines cannot be classified"
    line = analyze_command(text)
    if line.undecidable:
        return "it cannot be classified (" + "; ".join(line.undecidable) + ")"
    if line.writes:
        return "it writes a file (" + ", ".join(r.text for r in line.writes) + ")"
    if not line.commands:
        return "it runs no command"
    for command in line.commands:
        why = _command(command)
        if why is not None:
            return why
    return None


def _command(command: Command) -> str | None:
    for form in command.forms:
        first = form.split(" ", 1)[0]
        if first.rsplit("/", 1)[-1] in OTHER_USERS:
            return f"{first} runs it as another user"
    program = command.program
    if program is None:
        return f"{command.text} cannot be classified"
    if command.assignments:
        return (f"{command.text} sets {', '.join(command.assignments)} for the command; a "
                "read-only line runs commands in their own environment")
    wrapper = next((w for w in command.launchers if w not in LAUNCHERS), None)
    if wrapper is not None:
        return f"{wrapper} is not a wrapper a read-only line may use"
    argv = list(command.argv[1:])
    dynamic = {i - 1 for i in command.dynamic if i > 0}
    if program == "git":
        return _git(argv, dynamic, command)
    if program == "find":
        return _find(argv, dynamic)
    options = PROGRAMS.get(program)
    if options is None:
        return f"{program} is not a known read-only program"
    if (command.open_tail or dynamic) and not options.tail_safe:
        return (f"{program} is given arguments only known at run time, and one of them "
                "could make it write or run something")
    return _arguments(program, options, argv, dynamic)


def _arguments(name: str, options: Options, argv: Sequence[str], dynamic: set[int],
               numeric: bool | None = None) -> str | None:
    """Why ``argv`` is not what ``options`` allows ``name`` (the option names exactly),
    else ``None``."""
    if options.any_words:
        return None
    numeric = options.numeric if numeric is None else numeric
    operands: list[str] = []
    i, ended = 0, False
    while i < len(argv):
        word, at = argv[i], i
        i += 1
        if at in dynamic:
            operands.append(word)  # tail-safe here: any value is data
            continue
        if ended or word == "-" or not word.startswith("-"):
            if options.stop_at_operand:
                return None  # the rest is a command, judged on its own
            operands.append(word)
            continue
        if word == "--":
            ended = True
            continue
        if numeric and _NUMERIC.match(word):
            continue
        if word.startswith("--"):
            option, eq, _value = word.partition("=")
            if option in options.flags and not eq:
                continue
            if option in options.optional:
                continue
            arity = options.valued.get(option)
            if arity is None:
                return f"{name} {option} is not an option a read-only line may use"
            if not eq or arity > 1:
                i += arity - (1 if eq else 0)
            continue
        for k, letter in enumerate(word[1:], start=1):
            option = f"-{letter}"
            if option in options.valued:
                if k == len(word) - 1:
                    i += options.valued[option]  # the value is the next word
                break  # the rest of the word is the value
            if option in options.flags:
                continue
            if option in options.optional:
                break
            return f"{name} {option} is not an option a read-only line may use"
    if i > len(argv):
        return f"{name} is missing an option's value"
    if options.operands is not None and len(operands) > options.operands:
        return (f"{name} takes at most {options.operands} operand"
                f"{'' if options.operands == 1 else 's'} in a read-only line")
    if options.script is not None and (not operands or not options.script(operands[0])):
        return f"{name} runs only a script that prints lines in a read-only line"
    if options.operand is not None:
        bad = next((o for o in operands if not options.operand(o)), None)
        if bad is not None:
            return f"{name} {bad} is not read-only"
    return None


def _git(argv: list[str], dynamic: set[int], command: Command) -> str | None:
    line = parse_git(argv)
    if line.undecidable is not None:
        return line.undecidable
    extra = [o for o in line.options if o != "--no-pager"]
    if extra:
        return (f"git {extra[0]} is not allowed in a read-only line (no global option but "
                "--no-pager: the others point git at other repositories or config)")
    if line.sub is None:
        return None if not argv else "git without a subcommand cannot be classified"
    if command.open_tail or any(i <= line.sub for i in dynamic):
        return "git is given arguments only known at run time"
    sub, rest = argv[line.sub], argv[line.sub + 1:]
    shifted = {i - line.sub - 1 for i in dynamic}
    if any(i < _end_of_options(rest) for i in shifted):
        return f"git {sub} is given an argument computed at run time before --"
    options = SUBCOMMANDS.get(sub)
    if options is not None:
        why = _arguments(f"git {sub}", options, rest, shifted)
        return None if why is None else f"{why} (or it writes or runs something)"
    if sub in LISTERS:
        options, listing = LISTERS[sub]
        why = _arguments(f"git {sub}", options, rest, shifted)
        if why is not None:
            return why
        if sub == "config" and not listing.intersection(rest):
            return "git config without --get or --list changes the configuration"
        operands = [w for w in rest if not w.startswith("-")]
        if operands and not listing.intersection(rest):
            return f"git {' '.join([sub, *rest])} changes the repository"
        return None
    actions = ACTIONS.get(sub)
    if actions is not None:
        action = next((w for w in rest if not w.startswith("-")), None)
        options = actions.get(action) if action in actions else None
        if options is None:
            return f"git {sub} {action or ''} changes the repository or reaches a remote"
        words = list(rest)
        if action is not None:
            words.remove(action)
        return _arguments(f"git {sub} {action or ''}".strip(), options, words, set())
    return f"git {sub} changes the repository or is not known to be read-only"


def _end_of_options(words: Sequence[str]) -> int:
    return words.index("--") if "--" in words else len(words)


def _find(argv: list[str], dynamic: set[int]) -> str | None:
    if dynamic:
        return "find is given a word computed at run time, which could be an action"
    i = 0
    while i < len(argv) and argv[i] in FIND_LEADING:
        i += 1
    while i < len(argv) and not _find_expression(argv[i]):
        i += 1  # the starting points
    while i < len(argv):
        word = argv[i]
        i += 1
        if word in FIND_EXEC:
            while i < len(argv) and argv[i] not in (";", "+"):
                i += 1  # the command, judged on its own
            i += 1
        elif find_valued(word):
            i += 1
        elif word not in FIND_FLAGS:
            return f"find {word} is not something a read-only line may use"
    return None


def _find_expression(word: str) -> bool:
    return word.startswith("-") or word in ("!", "(", ")", ",")


__all__ = ["readonly_command"]
