"""Which shell command lines are read-only: the classifier strict read-only children use.

`readonly_command` parses the line with the permission engine's bash grammar
(`_commands.analyze_command`, tree-sitter-bash) and accepts it only when everything
is decided and every command it would run is on a short list of programs that read
and print (with the options that make them write refused), no redirection writes a
file, and nothing runs under another user. Whatever the parser cannot decide is
refused, never guessed. PowerShell lines are refused (no classifier for them yet).

Like the permission rules this judges the line, not the programs' behaviour: it is
a policy for subagents that are told to only read, not a sandbox.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from ._commands import Command, analyze_command

#: Programs that only read files and print, whatever their options (checked ones below).
PLAIN = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "[",
        "file",
        "stat",
        "du",
        "df",
        "which",
        "type",
        "whoami",
        "id",
        "uname",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "diff",
        "cmp",
        "comm",
        "cut",
        "tr",
        "uniq",
        "nl",
        "od",
        "hexdump",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "cksum",
        "jq",
        "column",
        "fold",
        "expand",
        "unexpand",
        "rev",
        "seq",
        "printenv",
        "cd",
        "xargs",
        "tac",
        "strings",
        "paste",
        "join",
        "locale",
        "nproc",
        "ps",
        "lsof",
    }
)

#: Options that make an otherwise reading program write, run or change something.
WRITING_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-ok", "-okdir"),
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "date": ("-s", "--set"),
    "rg": ("--pre",),
    "file": ("-C",),
}

#: git subcommands that only read the repository.
GIT_READERS = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "rev-list",
        "merge-base",
        "name-rev",
        "show-ref",
        "for-each-ref",
        "whatchanged",
        "count-objects",
        "version",
        "help",
    }
)
#: git subcommands that read when given only listing options.
GIT_LISTERS: dict[str, frozenset[str]] = {
    "branch": frozenset(
        {
            "-a",
            "-r",
            "-v",
            "-vv",
            "--list",
            "-l",
            "--all",
            "--remotes",
            "--show-current",
            "--contains",
            "--merged",
            "--no-merged",
        }
    ),
    "tag": frozenset({"-l", "--list", "-n"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "config": frozenset({"--get", "--get-all", "--list", "-l", "--get-regexp"}),
    "worktree": frozenset({"list"}),
}
#: git options that run programs or write files even for a reading subcommand.
GIT_UNSAFE = ("--output", "--ext-diff", "-O", "--open-files-in-pager", "--exec-path")
#: git's global options that take a value (``git -C dir status``).
GIT_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})

OTHER_USERS = frozenset({"sudo", "su", "doas", "runuser", "pkexec"})


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
        if posixpath.basename(first) in OTHER_USERS:
            return f"{first} runs it as another user"
    program = command.program
    if program is None:
        return f"{command.text} cannot be classified"
    argv = command.argv[1:]
    if program == "git":
        return _git(argv, command.text)
    if program in WRITING_OPTIONS:
        bad = _options(argv, WRITING_OPTIONS[program])
        return f"{program} {bad} changes something" if bad else None
    if program == "hostname":
        return (
            None
            if not argv or all(a.startswith("-") for a in argv)
            else "hostname with a name sets it"
        )
    if program in PLAIN:
        return None
    return f"{program} is not a known read-only program"


def _options(argv: Sequence[str], bad: Sequence[str]) -> str | None:
    """The first of ``bad`` that ``argv`` uses (``--opt=value`` and a one-letter option
    inside a cluster like ``-no`` count)."""
    for word in argv:
        for option in bad:
            if word == option or (option.startswith("--") and word.startswith(option + "=")):
                return option
            if (
                len(option) == 2
                and word.startswith("-")
                and not word.startswith("--")
                and option[1] in word[1:]
            ):
                return option
    return None


def _git(argv: Sequence[str], text: str) -> str | None:
    words = list(argv)
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option in GIT_VALUED:
            if not words:
                return f"{text} cannot be classified"
            words.pop(0)
        elif option not in (
            "--no-pager",
            "-P",
            "--no-optional-locks",
            "--bare",
        ) and not option.startswith(("--git-dir=", "--work-tree=")):
            return f"git {option} cannot be classified"
    if not words:
        return None
    sub, rest = words[0], words[1:]
    bad = _options(rest, GIT_UNSAFE)
    if bad:
        return f"git {sub} {bad} writes or runs something"
    if sub in GIT_READERS:
        return None
    listing = GIT_LISTERS.get(sub)
    if listing is not None:
        if sub == "config":
            return (
                None
                if rest and rest[0] in listing
                else f"git config {' '.join(rest)} changes the configuration"
            )
        if all(w in listing or (sub == "branch" and w.startswith("--format")) for w in rest):
            return None
        return f"git {' '.join(words)} changes the repository"
    return f"git {sub} changes the repository or is not known to be read-only"
