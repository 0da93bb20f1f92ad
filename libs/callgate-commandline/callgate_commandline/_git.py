"""What one ``git`` command line asks git to do, read the way git reads it.

Git's global options come before the subcommand (``git -C dir --no-pager push``), and
some of them change what runs: ``-c alias.p=push`` makes ``git p`` a push, ``-c
core.pager=<cmd>`` and a dozen other keys name programs git starts through the shell,
``--exec-path`` and ``core.hooksPath`` name directories of programs. `parse_git` splits
a command's words into its global options, the subcommand and what the options set, so
that permission rules see ``git push`` whatever precedes it (`_analyze`) and the
read-only classifier can refuse every global option but ``--no-pager`` (`_readonly`).

The environment steers git the same way: `SCRIPT_VARIABLES` are run as commands (their
value is a shell command line), `CONFIG_VARIABLES` inject config or point git at other
config and programs, so nothing about the line can be decided.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

#: global options that take no value
FLAGS = frozenset({
    "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
    "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
    "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--html-path", "--man-path",
    "--info-path", "--version", "-v", "--help", "-h",
})
#: global options whose value is the next word (the long ones also take ``=value``)
VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                    "--super-prefix", "--list-cmds", "--attr-source"})
#: subcommands that do what another one does, under a plumbing name (a rule for
#: ``git push`` covers ``git send-pack``)
SAME_AS = {"send-pack": "push", "http-push": "push", "fetch-pack": "fetch",
}

#: config keys whose value git runs as a shell command (``*`` is one name component)
_SCRIPT_KEYS = (
    "core.pager", "pager.*", "core.editor", "sequence.editor", "core.sshcommand",
    "diff.external", "diff.*.command", "diff.*.textconv", "filter.*.clean", "filter.*.smudge",
    "filter.*.process", "core.fsmonitor", "merge.*.driver", "core.askpass", "core.gitproxy",
    "gpg.program", "gpg.*.program", "credential.helper", "credential.*.helper",
    "uploadpack.packobjectshook", "core.alternaterefscommand", "remote.*.uploadpack",
    "remote.*.receivepack", "interactive.difffilter", "browser.*.cmd", "man.*.cmd",
    "sendemail.*cmd", "sendemail.*.*cmd",
)
#: config keys that define commands or point git at more config or programs
_OPAQUE_KEYS = ("alias.*", "core.hookspath", "include.path", "includeif.*.path",
                "core.worktree", "safe.directory")
#: environment variables whose value git (or another program) runs as a command
SCRIPT_VARIABLES = frozenset({
    "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
    "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    "SSH_ASKPASS", "GIT_PROXY_COMMAND",
})
#: environment variables that inject config or point git at other config or programs
CONFIG_VARIABLES = frozenset({
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
})
_CONFIG_VARIABLE = re.compile(r"^GIT_CONFIG_(KEY|VALUE)_\d+$")


def changes_what_runs(name: str) -> bool:
    """Whether setting environment variable ``name`` can change which programs run."""
    return name in CONFIG_VARIABLES or bool(_CONFIG_VARIABLE.match(name))


def _key_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + r"\.".join(".+" if p == "*" else re.escape(p)
                                        for p in pattern.split(".")) + "$")


_SCRIPT = tuple(_key_pattern(p) for p in _SCRIPT_KEYS)
_OPAQUE = tuple(_key_pattern(p) for p in _OPAQUE_KEYS)


def _canonical_key(key: str) -> str:
    """Section and name lowercased (git compares them so); a subsection keeps its case."""
    parts = key.split(".")
    if len(parts) < 2:
        return key.lower()
    return ".".join([parts[0].lower(), *parts[1:-1], parts[-1].lower()])


def key_kind(key: str) -> str:
    """``"script"`` (git runs the value), ``"opaque"`` (it defines a command or names more
    config or programs) or ``"data"``."""
    canonical = _canonical_key(key)
    if any(p.match(canonical) for p in _OPAQUE):
        return "opaque"
    if any(p.match(canonical) for p in _SCRIPT):
        return "script"
    return "data"


@attrs.frozen
class GitLine:
    """One git invocation: ``options`` are its global options as written, ``sub`` the
    index (in the words given) of the subcommand (``None``: there is none); ``scripts``
    are the command lines its ``-c`` options make git run; ``undecidable`` says why what
    it runs cannot be known (an alias defined on the line, an unknown option...)."""

    options: tuple[str, ...]
    sub: int | None
    scripts: tuple[str, ...] = ()
    undecidable: str | None = None

    def subcommand(self, words: Sequence[str | None]) -> str | None:
        return words[self.sub] if self.sub is not None else None


def parse_git(words: Sequence[str | None]) -> GitLine:
    """Read ``words`` (git's arguments after ``git``; ``None`` for a word computed at run
    time) as git does: global options up to the subcommand."""
    options: list[str] = []
    scripts: list[str] = []
    undecidable: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word is None:
            return GitLine(tuple(options), None, tuple(scripts),
                           "a git option or subcommand is computed at run time")
        if not word.startswith("-") or word == "-":
            return GitLine(tuple(options), i, tuple(scripts), undecidable)
        i += 1
        options.append(word)
        if word == "--":
            break
        name, eq, attached = word.partition("=")
        if name == "--exec-path":
            if eq:
                undecidable = undecidable or "git --exec-path= chooses the programs git runs"
            continue
        if word in FLAGS:
            continue
        if name in VALUED and name.startswith("--") and eq:
            value: str | None = attached
        elif word in VALUED:
            if i >= len(words):
                return GitLine(tuple(options), None, tuple(scripts), undecidable)
            value = words[i]
            options.append(value if value is not None else "$?")
            i += 1
        else:
            return GitLine(tuple(options), None, tuple(scripts),
                           f"git {word} is not an option git is known to take")
        if name in ("-c", "--config-env"):
            why = _config(name, value, scripts)
            undecidable = undecidable or why
    return GitLine(tuple(options), None, tuple(scripts), undecidable)


def _config(option: str, value: str | None, scripts: list[str]) -> str | None:
    """Record what ``-c key=value`` (or ``--config-env key=VAR``) makes git run."""
    if value is None:
        return f"git {option} is given a value computed at run time"
    key, eq, setting = value.partition("=")
    kind = key_kind(key)
    if kind == "data":
        return None
    if kind == "opaque":
        return (f"git {option} {key}=... defines a command or names more config or "
                "programs, so what the line runs is decided at run time")
    if option == "--config-env" or not eq:
        return f"git {option} {key} names a program only the environment knows"
    if setting.lower() in ("", "false", "true", "no", "yes", "off", "on", "0", "1"):
        return None  # a switch, not a program (core.fsmonitor=false)
    scripts.append(setting[1:] if setting.startswith("!") else setting)
    return None


__all__ = ["CONFIG_VARIABLES", "FLAGS", "SAME_AS", "SCRIPT_VARIABLES", "VALUED", "GitLine",
           "changes_what_runs", "key_kind", "parse_git"]
