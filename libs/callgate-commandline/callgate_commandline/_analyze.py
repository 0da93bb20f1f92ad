"""What a shell command line would run, as far as it can be known without running it.

`analyze_command` parses a ``bash`` line with a real bash grammar
(tree-sitter-bash) and returns a `CommandLine`: every command the line would
run, each redirection, and whether anything could not be decided statically.
Permission rules (host.md §6) judge the commands; a read-only classifier
needs nothing more than ``CommandLine.undecidable`` plus the commands' argv.

What counts as a command:

- every simple command anywhere in the line: in lists, pipelines, ``if``,
  loops, functions' bodies, and inside ``$(...)``, backticks, ``<(...)``,
  ``>(...)`` and unquoted here-documents, because those run too;
- the command a wrapper runs (``timeout``, ``nice``, ``nohup``, ``time``,
  ``stdbuf``, ``command``, ``builtin``, ``exec``, ``env``, ``sudo``, ``xargs``,
  ``find -exec``, ``watch``, ``flock``, ``su -c``, ``sh``/``bash -c`` with a
  literal script, which is parsed in turn, and launchers such as ``uv run``,
  ``poetry run``, ``npx``, ``bundle exec``, ``chroot`` or ``strace``); what
  ``xargs`` or ``find -exec`` add at run time leaves the command's tail open
  (`Command.open_tail`: a deny or ask rule it could grow into fires);
- for ``git``, the command without its global options (``git -C dir push`` is
  also ``git push``; ``send-pack`` is also ``push``) and the programs its ``-c``
  options and ``GIT_PAGER``-like variables make it run (`_git`).

What cannot be decided, and is reported in ``undecidable`` (the permission
engine then counts the line as matching every deny and ask rule, and no
allow rule covers it): a line that does not parse; ``eval``, ``source``/``.``,
``alias``, ``trap`` and other builtins that run text as code; a git alias
defined on the line (``git -c alias.p=push p``) or config injected through the
environment (``GIT_CONFIG_COUNT``...); a variable,
expansion or substitution in command position; an escape, ANSI-C quote, glob
or brace in a command name; a shell reading its script from standard input
(a pipe, here-string or here-document); a dynamic ``sh -c`` script or
redirection target; assignments to variables that change what runs (``PATH``,
``BASH_ENV``, ``LD_PRELOAD``, ...); arithmetic on a variable whose value the
line sets from text (bash evaluates ``a[$(cmd)]`` inside arithmetic).

This is a policy aid, not a boundary: a program can run anything it likes
(``python -c``, ``make``, a script file), and rules only see the line. The
sandbox is the boundary. ``flavor="pwsh"`` uses a quote-aware splitter and
counts every dynamic construct in command position as undecidable.
"""

from __future__ import annotations

import functools
import posixpath
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from ._git import SAME_AS, SCRIPT_VARIABLES, changes_what_runs, parse_git

_WS = re.compile(r"\s+")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
#: Nesting beyond this (``bash -c`` inside ``bash -c`` ...) is not followed.
MAX_DEPTH = 8
#: A line whose tree has more nodes, or is nested deeper, than this is not analyzed
#: (it is undecidable): the cost of judging a line stays linear in its length.
MAX_NODES = 20_000
MAX_TREE_DEPTH = 300


def normalize(segment: str) -> str:
    """One space between words, none at the ends (how rules and commands are compared)."""
    return _WS.sub(" ", segment).strip()


# --- the result ------------------------------------------------------------------------


@attrs.frozen
class Command:
    """One command the line would run.

    ``text`` is the command as written (whitespace normalized, redirections
    left out): what an allow rule is matched against, with ``allow_forms``.
    ``argv`` holds its words with quotes removed (a dynamic word keeps its
    source text). ``forms`` lists everything a deny or ask rule is tried on:
    the text, the argv, the program's base name, and the wrapper lines it was
    unwrapped from (and, for git, the line without its global options).
    ``undecidable`` says why it cannot be judged, or is None.
    """

    text: str
    argv: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()
    allow_forms: tuple[str, ...] = ()
    undecidable: str | None = None
    #: variables set for this command only (``A=1 cmd``, ``env A=1 cmd``), by name
    assignments: tuple[str, ...] = ()
    #: the wrappers and launchers it was unwrapped from, outermost first (``timeout``...)
    launchers: tuple[str, ...] = ()
    #: indexes in ``argv`` of words computed at run time (expansions, globs, braces, the
    #: ``{}`` of ``find -exec``/``xargs -I``): their value is not the one shown
    dynamic: tuple[int, ...] = ()
    #: more arguments are appended at run time (``xargs``, ``find -exec ... +``)
    open_tail: bool = False

    @property
    def program(self) -> str | None:
        """The program's base name (``rm`` for ``/bin/rm``), when decided."""
        if self.undecidable is not None or not self.argv:
            return None
        return posixpath.basename(self.argv[0]) or self.argv[0]


@attrs.frozen
class Redirection:
    """One redirection: ``operator`` (``>``, ``>>``, ``&>``, ``<``, ``<<<``...) and its target.

    ``target`` is the path with quotes removed, or None when it is computed
    at run time; ``writes`` is true for the operators that create or change
    the file.
    """

    operator: str
    target: str | None
    text: str
    writes: bool


@attrs.frozen
class CommandLine:
    """A parsed command line: its commands, redirections and what stayed undecided."""

    text: str
    commands: tuple[Command, ...]
    redirections: tuple[Redirection, ...]

    @property
    def undecidable(self) -> tuple[str, ...]:
        """Why parts of the line cannot be judged statically (empty: everything is decided)."""
        return tuple(c.undecidable for c in self.commands if c.undecidable is not None) + \
            tuple(f"a redirection to a computed target ({r.text})" for r in self.redirections
                  if r.target is None)

    @property
    def writes(self) -> tuple[Redirection, ...]:
        """The redirections that write a file (``/dev/null`` and the std streams left out)."""
        return tuple(r for r in self.redirections if r.writes)


def analyze_command(text: str, flavor: str = "posix") -> CommandLine:
    """Parse ``text`` as ``flavor`` (``"posix"``: bash; ``"pwsh"``: PowerShell)."""
    return _analyze_cached(text, "pwsh" if flavor == "pwsh" else "posix")


@functools.lru_cache(maxsize=4096)
def _analyze_cached(text: str, flavor: str) -> CommandLine:
    if flavor == "pwsh":
        from ._pwsh import analyze_pwsh
        return analyze_pwsh(text)
    out = _Collector()
    _analyze_bash(text, out, depth=0)
    return CommandLine(text, tuple(out.commands), tuple(out.redirections))


# --- the bash parser -------------------------------------------------------------------

_local = threading.local()


def _parser() -> Any:
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


def _parse(text: str) -> Any:
    return _parser().parse(text.encode("utf-8", "surrogatepass")).root_node


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


@attrs.define
class _Collector:
    commands: list[Command] = attrs.Factory(list)
    redirections: list[Redirection] = attrs.Factory(list)

    def undecided(self, text: str, why: str) -> None:
        self.commands.append(Command(normalize(text) or text, undecidable=why))


#: Builtins that run text as code, change how later words are looked up, or read
#: commands from elsewhere.
_RUNS_TEXT = {
    "eval": "eval runs text as a command",
    "source": "source runs a file's commands in this shell",
    ".": ". runs a file's commands in this shell",
    "alias": "an alias can rename any command",
    "unalias": "aliases change which command a word names",
    "trap": "trap runs text as a command later",
    "fc": "fc re-runs commands from the history",
    "hash": "hash can change which program a name runs",
    "enable": "enable can load or hide builtins",
    "shopt": "shopt can turn on alias expansion and other parsing changes",
    "parallel": "parallel builds its commands at run time",
}
#: Variables whose value changes which program or code a later command runs.
_DANGEROUS_VARIABLES = frozenset({
    "PATH", "BASH_ENV", "ENV", "PS4", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
    "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "GLOBIGNORE", "CDPATH", "EXECIGNORE",
    "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "PYTHONSTARTUP", "NODE_OPTIONS",
})


def _dangerous(name: str) -> bool:
    """Whether setting variable ``name`` changes which program or code a command runs."""
    return name in _DANGEROUS_VARIABLES or name.startswith("BASH_FUNC_") or \
        changes_what_runs(name)


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash",
                     "lksh", "pdksh", "fish"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>"})
#: Targets that are not files in any useful sense.
_HARMLESS_TARGETS = re.compile(r"^/dev/(null|zero|full|stdout|stderr|stdin|tty|fd/\d+)$")


def _analyze_bash(text: str, out: _Collector, depth: int) -> None:
    if depth > MAX_DEPTH:
        out.undecided(text, f"shell scripts nested more than {MAX_DEPTH} deep")
        return
    if "\\\n" in text:
        # bash deletes a backslash-newline before it splits words (tou\<newline>ch is touch);
        # the grammar reads it as a word break. Judge both readings.
        joined = text.replace("\\\r\n", "").replace("\\\n", "")
        _analyze_bash(joined, out, depth + 1)
    if _analyze_plain(text, out, depth):
        return
    root = _parse(text)
    if root.has_error:
        out.undecided(text, "it does not parse as bash")
        return
    if root.descendant_count > MAX_NODES:
        out.undecided(text, "the line is too large to analyze")
        return
    _Walker(out, depth).walk(root)


#: A line of plain words and separators: no quotes, escapes, expansions, globs,
#: redirections or grouping, so splitting it needs no grammar.
_PLAIN_LINE = re.compile(r"^[A-Za-z0-9_\-./=:,@%+^ \t\n;|&]*$")
_PLAIN_SEPARATOR = re.compile(r"\|&|&&|\|\||[;&|\n]")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do",
                       "done", "case", "esac", "in", "function", "select", "time", "coproc",
                       "export", "declare", "typeset", "local", "readonly", "unset"})


def _analyze_plain(text: str, out: _Collector, depth: int) -> bool:
    """The fast path for plain lines (most commands a model runs); False: use the grammar."""
    if not _PLAIN_LINE.match(text):
        return False
    pieces = _PLAIN_SEPARATOR.split(text)
    separators = ["\n", *_PLAIN_SEPARATOR.findall(text), "\n"]
    for k, piece in enumerate(pieces):  # an empty command only after ; & or a newline
        names = piece.split()
        if not names and not (separators[k] in (";", "&", "\n")
                              and separators[k + 1] == "\n"):
            return False  # "a | | b", "a;;b": let the grammar judge it
        first = next((n for n in names if not _ASSIGNMENT.match(n)), None)
        if first in _RESERVED:
            return False  # a keyword or declaration in command position
    walker = _Walker(out, depth)
    for k, piece in enumerate(pieces):
        names = piece.split()
        if not names:
            continue
        prefix: list[str] = []
        while names and _ASSIGNMENT.match(names[0]):
            prefix.append(names.pop(0))
        for assignment in prefix:
            name = _ASSIGNMENT.match(assignment).group(1)  # type: ignore[union-attr]
            if _dangerous(name):
                out.undecided(piece, f"it sets {name}, which changes what later commands run")
            walker.tainted.add(name)
        if not names:
            for assignment in prefix:  # an exported variable keeps steering later commands
                name, _eq, value = assignment.partition("=")
                walker.script_variable(name, _Word(value, value), piece)
            continue
        piped = separators[k] in ("|", "|&")
        words = [_Word(n, n) for n in names]
        assigned = tuple((a.partition("=")[0], _Word(a.partition("=")[2], a.partition("=")[2]))
                         for a in prefix)
        walker._judge(words, normalize(piece), prefix, False, piped, assigned=assigned)
    return True


# --- static words ------------------------------------------------------------------------


@attrs.frozen
class _Word:
    """A word's value with quotes removed (None when computed at run time) and its source."""

    value: str | None
    raw: str
    escaped: bool = False  # a backslash escape or an ANSI-C quote
    pattern: bool = False  # an unquoted glob or brace

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else self.raw


_GLOB = re.compile(r"[*?\[]|\{[^{}]*(,|\.\.)[^{}]*\}")
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')


def _word(node: Any) -> _Word:
    raw = _text(node)
    kind = node.type
    if kind in ("word", "number"):
        if "\\" in raw:
            value = re.sub(r"\\(.)", r"\1", raw.replace("\\\n", ""), flags=re.DOTALL)
            return _Word(value, raw, escaped=True, pattern=bool(_GLOB.search(raw)))
        return _Word(raw, raw, pattern=bool(_GLOB.search(raw)) or raw.startswith("~"))
    if kind == "raw_string":
        return _Word(raw[1:-1], raw)
    if kind == "string":
        parts = []
        for child in node.named_children:
            if child.type != "string_content":
                return _Word(None, raw)
            parts.append(_DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1),
                                        _text(child)))
        return _Word("".join(parts), raw)
    if kind == "ansi_c_string":
        return _Word(None, raw, escaped=True)
    if kind == "concatenation":
        words = [_word(c) for c in node.named_children]
        value = None if any(w.value is None for w in words) else "".join(
            w.value or "" for w in words)
        return _Word(value, raw, any(w.escaped for w in words), any(w.pattern for w in words))
    return _Word(None, raw)


# --- wrappers --------------------------------------------------------------------------

#: Per wrapper: options that take a value (short, and long without ``=``).
_OPTIONS_WITH_VALUE: dict[str, frozenset[str]] = {
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid",
                         "-u", "--uid"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "coproc": frozenset(),
    "setsid": frozenset(),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "busybox": frozenset(),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-P", "-a", "--argv0"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt",
                       "-C", "--close-from", "-D", "--chdir", "-r", "--role", "-t", "--type",
                       "-T", "--command-timeout", "-U", "--other-user", "-R", "--chroot"}),
    "doas": frozenset({"-C", "-u"}),
    "xargs": frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L",
                        "--max-lines", "-n", "--max-args", "-P", "--max-procs", "-s",
                        "--max-chars", "--process-slot-var"}),
    "watch": frozenset({"-n", "--interval", "-q", "--equexit", "--differences"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "uv run": frozenset({"--with", "--with-editable", "--with-requirements", "--python",
                         "-p", "--package", "--extra", "--group", "--only-group",
                         "--no-group", "--env-file", "--directory", "--project", "--index",
                         "--default-index", "--index-url", "--extra-index-url",
                         "--config-file", "--cache-dir", "--exclude-newer", "--resolution",
                         "--prerelease"}),
    "conda run": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "mamba run": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "micromamba run": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "npx": frozenset({"-p", "--package"}),
    "npm exec": frozenset({"-p", "--package", "-w", "--workspace"}),
    "npm x": frozenset({"-p", "--package", "-w", "--workspace"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P",
                         "-S", "-X"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-w", "-l"}),
}
#: Wrappers that run their arguments as the same command: rules judge the inner command.
_TRANSPARENT = frozenset({"timeout", "nice", "nohup", "time", "stdbuf", "ionice", "command",
                          "builtin", "exec", "coproc", "setsid", "busybox", "chrt", "taskset"})
#: Wrappers whose written line is what an allow rule must name (they change who or
#: what environment runs the command); deny and ask rules see the inner command too.
_GOVERNING = frozenset({"sudo", "doas", "env"})
#: Positional arguments a wrapper takes before the command.
_LEADING_POSITIONALS = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1, "chroot": 1,
                        "faketime": 1, "direnv exec": 1}
#: Launchers: programs (or ``program subcommand``) that run the command after their
#: options, in an environment of their own. Like ``sudo`` and ``env``, their written line
#: is what an allow rule must name, and deny and ask rules see the command they run too.
#: Options not listed in `_OPTIONS_WITH_VALUE`/`_FLAGS` leave where the command starts
#: uncertain, so deny and ask rules then see every later start.
_LAUNCHERS: dict[str, tuple[str, ...]] = {
    "uv": ("run",), "poetry": ("run",), "pipenv": ("run",), "pdm": ("run",),
    "hatch": ("run",), "rye": ("run",), "conda": ("run",), "mamba": ("run",),
    "micromamba": ("run",), "pixi": ("run", "exec"), "npm": ("exec", "x"),
    "pnpm": ("exec",), "yarn": ("exec",), "bundle": ("exec",), "mise": ("exec", "x"),
    "direnv": ("exec",), "npx": (), "bunx": (), "unbuffer": (), "chronic": (),
    "eatmydata": (), "fakeroot": (), "torsocks": (), "proxychains": (), "proxychains4": (),
    "catchsegv": (), "dbus-run-session": (), "xvfb-run": (), "rlwrap": (), "chroot": (),
    "nsenter": (), "unshare": (), "setpriv": (), "prlimit": (), "systemd-run": (),
    "firejail": (), "strace": (), "ltrace": (), "valgrind": (), "numactl": (),
    "faketime": (),
}
#: Programs that run a script given to an option (``script -c``, ``npx -c``).
_SCRIPT_OPTIONS = {"script": ("-c", "--command"), "npx": ("-c", "--call")}


def _launcher(program: str, rest: Sequence[_Word]) -> str | None:
    """The `_LAUNCHERS` key ``program`` (with ``rest``) starts, or ``None``."""
    subcommands = _LAUNCHERS.get(program)
    if subcommands is None:
        return None
    if not subcommands:
        return program
    first = rest[0].value if rest else None
    return f"{program} {first}" if first in subcommands else None


#: Per wrapper: options that take no value (short flags may be clustered: ``-rt``).
_FLAGS: dict[str, frozenset[str]] = {
    "timeout": frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
    "stdbuf": frozenset(),
    "ionice": frozenset({"-t", "--ignore"}),
    "time": frozenset({"-p", "-a", "--append", "-v", "--verbose", "-q", "--quiet",
                       "--portability"}),
    "exec": frozenset({"-c", "-l"}),
    "command": frozenset({"-p", "-v", "-V"}),
    "env": frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug",
                      "--default-signal", "--ignore-signal", "--block-signal",
                      "--list-signal-handling"}),
    "sudo": frozenset({"-E", "--preserve-env", "-H", "--set-home", "-n", "--non-interactive",
                       "-S", "--stdin", "-b", "--background", "-i", "--login", "-s", "--shell",
                       "-k", "--reset-timestamp", "-A", "--askpass", "-P",
                       "--preserve-groups", "-B", "--bell", "-N", "--no-update"}),
    "doas": frozenset({"-n", "-s"}),
    "xargs": frozenset({"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p",
                        "--interactive", "-x", "--exit", "-o", "--open-tty", "-e", "-i", "-l"}),
    "watch": frozenset({"-d", "-t", "--no-title", "-b", "--beep", "-e", "--errexit", "-g",
                        "--chgexit", "-c", "--color", "-x", "--exec", "-p", "--precise",
                        "-w", "--no-wrap", "-C", "--no-color", "-r", "--no-rerun"}),
    "flock": frozenset({"-s", "--shared", "-x", "--exclusive", "-u", "--unlock", "-n",
                        "--nonblock", "-o", "--close", "-F", "--no-fork", "--verbose"}),
    "setsid": frozenset({"-c", "--ctty", "-f", "--fork", "-w", "--wait"}),
    "uv run": frozenset({"--no-project", "--frozen", "--locked", "--isolated", "--no-sync",
                         "--all-extras", "--no-dev", "--dev", "--quiet", "-q", "--verbose",
                         "-v", "--offline", "--no-cache", "--active", "--exact",
                         "--all-packages", "--no-editable", "--inexact", "--all-groups",
                         "--no-config", "--no-env-file", "--native-tls"}),
    "conda run": frozenset({"--no-capture-output", "--live-stream", "-v", "--verbose"}),
    "mamba run": frozenset({"--no-capture-output", "--live-stream", "-v", "--verbose"}),
    "micromamba run": frozenset({"--attach", "-a", "--detach", "-d", "-v", "--verbose"}),
    "npx": frozenset({"-y", "--yes", "--no", "-q", "--quiet"}),
    "npm exec": frozenset({"-y", "--yes", "--no"}),
    "npm x": frozenset({"-y", "--yes", "--no"}),
    "poetry run": frozenset({"-q", "--quiet", "-v", "-vv", "-vvv", "--verbose",
                             "--no-interaction", "-n"}),
    "pipenv run": frozenset(),
    "bundle exec": frozenset({"--keep-file-descriptors"}),
    "strace": frozenset({"-f", "-ff", "-q", "-qq", "-c", "-C", "-w", "-T", "-t", "-tt",
                         "-ttt", "-r", "-x", "-xx", "-y", "-yy", "-v", "-V", "-k", "-z",
                         "-Z", "-n", "-i", "-A", "-d", "-D", "-h"}),
    "ltrace": frozenset({"-f", "-c", "-C", "-i", "-r", "-S", "-t", "-tt", "-ttt", "-T",
                         "-b", "-h"}),
}
#: Options whose value may be attached only (``-e[eof]``, ``-i[replace]``, ``-l[n]``).
_ATTACHED_ONLY = {"xargs": frozenset("eil")}


def _split_options(name: str, words: Sequence[_Word]) -> tuple[list[str], int, bool]:
    """Options of wrapper ``name`` at the start of ``words``: (options, index of the rest, ok).

    ``ok`` is false when an option was not understood: it may have taken the
    next word as its value, so where the command starts is a guess.
    """
    with_value = _OPTIONS_WITH_VALUE.get(name, frozenset())
    flags = _FLAGS.get(name, frozenset())
    seen: list[str] = []
    i, ok = 0, True
    while i < len(words):
        value = words[i].value
        if value is None or not value.startswith("-") or value == "-":
            break
        i += 1
        if value == "--":
            break
        seen.append(value)
        if name == "nice" and re.fullmatch(r"-\d+", value):
            continue
        if name in ("chrt", "taskset"):
            continue  # their options take no separate value that matters here
        if value.startswith("--"):
            option = value.split("=", 1)[0]
            if option in with_value and "=" not in value:
                i += 1
            elif option not in with_value and option not in flags:
                ok = False
            continue
        for k, letter in enumerate(value[1:], start=1):
            option = f"-{letter}"
            if option in with_value:
                if k == len(value) - 1:
                    i += 1  # the value is the next word; otherwise it is attached
                break
            if letter in _ATTACHED_ONLY.get(name, frozenset()):
                break
            if option not in flags:
                ok = False
                break
    return seen, i, ok


# --- the walker -------------------------------------------------------------------------

_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_READERS = frozenset({"read", "mapfile", "readarray", "getopts", "printf"})


class _Walker:
    """One pass over a parsed line, collecting commands, redirections and doubts."""

    def __init__(self, out: _Collector, depth: int) -> None:
        self.out = out
        self.depth = depth
        self.tainted: set[str] = set()  # variables the line sets from text
        self.arithmetic: list[Any] = []  # arithmetic nodes, judged once taints are known

    def walk(self, root: Any) -> None:
        cursor = root.walk()
        for count, node in enumerate(_nodes(root, cursor), start=1):
            if count > MAX_NODES or cursor.depth > MAX_TREE_DEPTH:
                self.out.undecided(_text(root), "the line is nested too deeply to analyze")
                return
            self.visit(node)
        self._judge_arithmetic()

    def visit(self, node: Any) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind == "test_command":
            text = normalize(_text(node))
            self.out.commands.append(Command(text, (text,), (text,), (text,)))
            self._arithmetic_tests(node)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind in ("file_redirect", "herestring_redirect"):
            self.redirect(node)
        elif kind == "heredoc_body":
            start = next((c for c in (node.parent.children if node.parent else ())
                          if c.type == "heredoc_start"), None)
            quoted = start is not None and any(q in _text(start) for q in "'\"\\")
            if not quoted and "`" in _text(node):
                self.out.undecided(_text(node), "a backtick substitution in a here-document")
        elif kind in ("arithmetic_expansion", "subscript", "c_style_for_statement") or (
                kind == "compound_statement" and node.child_count
                and node.children[0].type == "(("):
            self.arithmetic.append(node)
        elif kind in ("for_statement", "select_statement"):
            name = node.child_by_field_name("variable")
            if name is not None:
                self.tainted.add(_text(name))

    # --- assignments and arithmetic -----------------------------------------------

    def assignment(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            name = _text(inner) if inner is not None else name
        if _dangerous(name):
            self.out.undecided(_text(node), f"it sets {name}, which changes what later "
                               "commands run")
        value = node.child_by_field_name("value")
        if node.parent is None or node.parent.type != "command":
            # an exported variable keeps steering later commands (GIT_PAGER=...; git log)
            self.script_variable(name, _word(value) if value is not None else _Word("", ""),
                                 _text(node))
        if value is None or value.type not in ("number", "arithmetic_expansion"):
            self.tainted.add(name)

    def _arithmetic_tests(self, node: Any) -> None:
        for child in _nodes(node):
            if child.type == "binary_expression" and any(
                    c.type == "test_operator" and _text(c) in _ARITHMETIC_TESTS
                    for c in child.children):
                self.arithmetic.append(child)

    def _judge_arithmetic(self) -> None:
        if not self.tainted:
            return
        for node in self.arithmetic:
            for child in _nodes(node):
                if child.type == "variable_name" and _text(child) in self.tainted:
                    self.out.undecided(_text(node), f"arithmetic evaluates ${_text(child)}, "
                                       "which the line sets from text (a[$(cmd)] would run)")
                    return

    # --- redirections ----------------------------------------------------------------

    def redirect(self, node: Any) -> None:
        if node.type == "herestring_redirect":
            return  # stdin from text: judged where a shell reads it
        operator = next((_text(c) for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            destination = named[-1] if named else None
        if destination is None or destination.type == "process_substitution":
            return
        if operator in (">&", "<&") and destination.type == "number":
            return  # a descriptor copy: 2>&1
        if operator in (">&-", "<&-"):
            return
        writes = operator in _WRITE_OPERATORS or operator in (">&", "<>")
        word = _word(destination)
        target = word.value if not word.pattern else None
        if target is not None and _HARMLESS_TARGETS.match(target):
            writes = False
        self.out.redirections.append(Redirection(operator, target, normalize(_text(node)),
                                                 writes))

    # --- commands ------------------------------------------------------------------------

    def declaration(self, node: Any) -> None:
        text = normalize(_text(node))
        keyword = _text(node.children[0]) if node.child_count else ""
        argv = tuple(_word(c).shown for c in node.named_children
                     if c.type not in ("variable_assignment",))
        self.out.commands.append(Command(text, (keyword, *argv), (text,), (text,)))
        if keyword in ("declare", "typeset", "local", "export", "readonly") and any(
                _text(c).startswith("-") and "n" in _text(c) for c in node.named_children
                if c.type == "word"):
            self.out.undecided(text, f"{keyword} -n makes a name refer to another variable")

    def command(self, node: Any) -> None:
        prefix: list[str] = []
        assigned: list[tuple[str, _Word]] = []
        words: list[_Word] = []
        stdin_text = False
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                prefix.append(_text(child))
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                assigned.append((_text(name) if name is not None else "",
                                 _word(value) if value is not None else _Word("", "")))
            elif kind == "command_name":
                words.insert(0, _word(child.named_children[0] if child.named_child_count
                                      else child))
            elif kind in ("herestring_redirect", "heredoc_redirect"):
                stdin_text = True
            elif kind not in ("file_redirect", "comment"):
                words.append(_word(child))
        if not words:
            return  # assignments only; visited on their own
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            stdin_text = stdin_text or _feeds_stdin(parent)
        written = normalize(" ".join([*prefix, *(w.raw for w in words)]))
        self._judge(words, written, prefix, stdin_text, piped=_is_piped_into(node),
                    assigned=tuple(assigned))

    def _judge(self, words: Sequence[_Word], written: str, prefix: list[str],
               stdin_text: bool, piped: bool, outer: tuple[str, ...] = (),
               governed: tuple[str, ...] | None = None, *,
               assigned: Sequence[tuple[str, _Word]] = (), inherited: tuple[str, ...] = (),
               launchers: tuple[str, ...] = (), open_tail: bool = False,
               hole: str | None = None) -> None:
        """Record the command ``words`` (written as ``written``) and what it runs.

        ``assigned``: the variables its prefix sets (name, value); ``inherited``: the names
        a wrapper (``env A=1``) set; ``launchers``: the wrappers it was unwrapped from;
        ``open_tail``: arguments are appended at run time; ``hole``: words holding this
        text are filled in at run time (``{}`` of ``find -exec``, ``xargs -I``)."""
        out = self.out
        head = words[0]
        if head.value is None or (hole is not None and hole in head.value):
            out.undecided(written, f"the command name {head.raw} is computed at run time")
            return
        if head.escaped:
            out.undecided(written, f"the command name {head.raw} contains an escape")
            return
        if head.pattern:
            out.undecided(written, f"the command name {head.raw} is a glob, brace or tilde "
                          "pattern")
            return
        argv = tuple(w.shown for w in words)
        program = posixpath.basename(argv[0]) or argv[0]
        why = _RUNS_TEXT.get(program)
        if why:
            out.undecided(written, why)
            return
        if program in _READERS:
            self.tainted.update(w.value for w in words[1:] if w.value and _NAME.match(w.value))
        if program == "let" and self.tainted:
            out.undecided(written, "let evaluates arithmetic on variables the line sets from "
                          "text")
        plain = " ".join(argv)
        based = " ".join((program, *argv[1:]))
        if governed is not None:
            written = governed[0]  # what an allow rule must name, and what the model is shown
        forms = _unique(written, " ".join([*prefix, plain]) if prefix else plain, plain, based,
                        *outer)
        allow = governed if governed is not None else _unique(
            written, " ".join([*prefix, plain]) if prefix else plain)
        for name, value in assigned:
            if _dangerous(name):
                out.undecided(written, f"it sets {name}, which changes what the command runs")
                return
            self.script_variable(name, value, written)
        dynamic = tuple(i for i, w in enumerate(words) if w.value is None or w.pattern
                        or (hole is not None and hole in w.value))
        if dynamic and hole is not None:
            # filled in at run time: a rule the known words could grow into fires
            open_tail = True
            forms = _unique(*forms, " ".join(argv[:dynamic[0]]),
                            " ".join((program, *argv[1:dynamic[0]])))
        context = {"assignments": (*(n for n, _v in assigned), *inherited),
                   "launchers": launchers, "dynamic": dynamic, "open_tail": open_tail}
        rest = words[1:]
        if program in _SHELLS:
            if dynamic and hole is not None:
                out.undecided(written, f"the script {program} runs is filled in at run time")
                return
            self._shell(program, rest, written, forms, allow, stdin_text, piped)
            return
        script_options = _SCRIPT_OPTIONS.get(program, ())
        if any(w.value is not None and w.value.split("=", 1)[0] in script_options
               for w in rest):
            out.commands.append(Command(written, argv, forms, allow, **context))  # type: ignore[arg-type]
            self._su(rest, written, script_options)
            return
        launcher = _launcher(program, rest)
        if launcher is not None:
            self._wrapper(launcher, rest[len(launcher.split()) - 1:], written, forms, allow,
                          stdin_text, piped, governing=True, inherited=inherited,
                          launchers=launchers, open_tail=open_tail, hole=hole)
            return
        if program in _TRANSPARENT or program in _GOVERNING:
            self._wrapper(program, rest, written, forms, allow, stdin_text, piped,
                          governing=governed is not None or program in _GOVERNING,
                          inherited=inherited, launchers=launchers, open_tail=open_tail,
                          hole=hole)
            return
        if program == "git":
            forms = self._git(rest, written, forms)
        command = Command(written, argv, forms, allow, **context)  # type: ignore[arg-type]
        if program == "xargs":
            out.commands.append(command)
            self._xargs(rest, written, launchers)
            return
        if program == "find":
            out.commands.append(command)
            self._find(rest, launchers)
            return
        if program == "watch":
            out.commands.append(command)
            flags, i, _ok = _split_options("watch", rest)
            inner = list(rest[i:])
            if not inner:
                return
            if "-x" in flags or "--exec" in flags:
                self._judge(inner, normalize(" ".join(w.raw for w in inner)), [], False, False,
                            launchers=(*launchers, "watch"))
            else:
                self._script(inner, written, "watch runs its arguments with sh -c")
            return
        if program == "flock":
            out.commands.append(command)
            self._flock(rest, written)
            return
        if program in ("su", "runuser"):
            out.commands.append(command)
            self._su(rest, written)
            return
        out.commands.append(command)

    def script_variable(self, name: str, value: _Word, written: str) -> None:
        """A variable whose value programs run as a command (``GIT_PAGER``, ``EDITOR``...):
        that command is judged too."""
        if name not in SCRIPT_VARIABLES:
            return
        if value.value is None:
            self.out.undecided(written, f"{name} names a command computed at run time")
        elif value.value.strip():
            _analyze_bash(value.value, self.out, self.depth + 1)

    def _git(self, rest: Sequence[_Word], written: str, forms: tuple[str, ...]
             ) -> tuple[str, ...]:
        """``git``'s forms without its global options (and under a subcommand it is the
        same as); the programs its ``-c`` options name are judged; an alias or config
        pointer defined on the line makes it undecidable."""
        values = [w.value for w in rest]
        line = parse_git(values)
        for script in line.scripts:
            _analyze_bash(script, self.out, self.depth + 1)
        if line.undecidable is not None:
            self.out.undecided(written, line.undecidable)
        if line.sub is None:
            return forms
        tail = [w.shown for w in rest[line.sub:]]
        extra = ["git " + " ".join(tail)]
        same = SAME_AS.get(tail[0])
        if same is not None:
            extra.append(" ".join(["git", same, *tail[1:]]))
        return _unique(*forms, *extra)

    def _xargs(self, rest: Sequence[_Word], written: str, launchers: tuple[str, ...]) -> None:
        """The command ``xargs`` runs: its tail is open (arguments from standard input), or
        with ``-I`` its words holding the replacement are filled in."""
        _flags, i, _ok = _split_options("xargs", rest)
        replace: str | None = None
        options = list(rest[:i])
        for k, word in enumerate(options):
            value = word.value
            if value is None:
                continue
            if value in ("-I", "--replace") and k + 1 < len(options):
                replace = options[k + 1].value
                if replace is None:
                    self.out.undecided(written, "xargs -I is given a computed replacement")
                    return
            elif value.startswith("-I") and len(value) > 2:
                replace = value[2:]
            elif value.startswith("--replace="):
                replace = value.split("=", 1)[1]
            elif value == "-i" or value == "--replace":
                replace = "{}"
            elif value.startswith("-i") and len(value) > 2:
                replace = value[2:]
        inner = list(rest[i:]) or [_Word("echo", "echo")]
        self._judge(inner, normalize(" ".join(w.raw for w in inner)), [], False, False,
                    launchers=(*launchers, "xargs"), open_tail=replace is None,
                    hole=replace or None)

    def _wrapper(self, program: str, rest: Sequence[_Word], written: str,
                 forms: tuple[str, ...], allow: tuple[str, ...], stdin_text: bool,
                 piped: bool, governing: bool, inherited: tuple[str, ...] = (),
                 launchers: tuple[str, ...] = (), open_tail: bool = False,
                 hole: str | None = None) -> None:
        flags, i, ok = _split_options(program, rest)
        if program == "command" and any(f in ("-v", "-V") for f in flags):
            self.out.commands.append(Command(written, tuple(w.shown for w in (
                _Word("command", "command"), *rest)), forms, allow))
            return
        if program == "env" and any(f in ("-S", "--split-string") or f.startswith(
                ("--split-string=", "-S")) for f in flags):
            self.out.undecided(written, "env -S splits a string into a command at run time")
            return
        names: list[str] = []
        if program in ("env", "sudo", "doas"):
            while i < len(rest) and rest[i].value and _ASSIGNMENT.match(rest[i].value):
                name = _ASSIGNMENT.match(rest[i].value).group(1)  # type: ignore[union-attr]
                if _dangerous(name):
                    self.out.undecided(written, f"it sets {name}, which changes what the "
                                       "command runs")
                    return
                value = (rest[i].value or "").split("=", 1)[1]
                self.script_variable(name, _Word(value, value), written)
                names.append(name)
                i += 1
        i += _LEADING_POSITIONALS.get(program, 0)
        inner = list(rest[i:])
        if not inner:
            self.out.commands.append(Command(written, (program, *(w.shown for w in rest)),
                                             forms, allow))
            return
        if not ok:
            # an option we do not know may have taken the next word: deny and ask rules
            # also see every later start
            forms = forms + tuple(normalize(" ".join(w.shown for w in rest[start:]))
                                  for start in range(i + 1, len(rest)))
        inner_written = normalize(" ".join(w.raw for w in inner))
        self._judge(inner, inner_written, [], stdin_text, piped, outer=forms,
                    governed=allow if governing else None, inherited=(*inherited, *names),
                    launchers=(*launchers, program), open_tail=open_tail, hole=hole)

    def _shell(self, program: str, rest: Sequence[_Word], written: str,
               forms: tuple[str, ...], allow: tuple[str, ...], stdin_text: bool,
               piped: bool) -> None:
        script: _Word | None = None
        reads_stdin = False
        command_mode = False
        i = 0
        while i < len(rest):
            value = rest[i].value
            if value is None:
                break
            if value in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if value == "--":
                i += 1
                break
            if value.startswith("--"):
                i += 1
                continue
            if value[:1] in "-+" and len(value) > 1:
                command_mode = command_mode or "c" in value[1:]
                reads_stdin = reads_stdin or "s" in value[1:]
                i += 1
                continue
            break
        operands = list(rest[i:])
        self.out.commands.append(Command(written, (program, *(w.shown for w in rest)), forms,
                                         allow))
        if command_mode:
            script = operands[0] if operands else None
            if script is None:
                self.out.undecided(written, f"{program} -c without a script")
            elif script.value is None:
                self.out.undecided(written, f"the script {program} -c runs is computed at "
                                   "run time")
            else:
                _analyze_bash(script.value, self.out, self.depth + 1)
            return
        if (reads_stdin or not operands) and (stdin_text or piped):
            self.out.undecided(written, f"{program} reads its commands from standard input")

    def _script(self, words: Sequence[_Word], written: str, why: str) -> None:
        if any(w.value is None for w in words):
            self.out.undecided(written, f"{why}, and the script is computed at run time")
            return
        _analyze_bash(" ".join(w.value or "" for w in words), self.out, self.depth + 1)

    def _find(self, rest: Sequence[_Word], launchers: tuple[str, ...] = ()) -> None:
        i = 0
        while i < len(rest):
            if rest[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(rest) and rest[j].value not in (";", "+"):
                    j += 1
                inner = list(rest[i + 1:j])
                if inner:
                    self._judge(inner, normalize(" ".join(w.raw for w in inner)), [], False,
                                False, launchers=(*launchers, "find"), hole="{}")
                i = j
            i += 1

    def _flock(self, rest: Sequence[_Word], written: str) -> None:
        _flags, i, _ok = _split_options("flock", rest)
        operands = list(rest[i + 1:])  # after the lock file or directory
        if operands and operands[0].value in ("-c", "--command"):
            self._script(operands[1:2], written, "flock -c runs a script")
        elif operands:
            self._judge(operands, normalize(" ".join(w.raw for w in operands)), [], False,
                        False)

    def _su(self, rest: Sequence[_Word], written: str,
            options: Sequence[str] = ("-c", "--command")) -> None:
        """The script of ``su -c`` (or ``script -c``, ``npx -c``: the ``options``)."""
        for k, word in enumerate(rest):
            value = word.value or ""
            if value in options:
                self._script(rest[k + 1:k + 2], written, f"{value} runs a script")
                return
            name, eq, script = value.partition("=")
            if eq and name in options and name.startswith("--"):
                self._script([_Word(script, word.raw)], written, f"{name} runs a script")
                return


def _nodes(root: Any, cursor: Any = None) -> Iterator[Any]:
    """Every node under ``root``, depth first, without recursion."""
    cursor = cursor if cursor is not None else root.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def _feeds_stdin(statement: Any) -> bool:
    """A redirected statement that feeds its command's standard input."""
    for child in statement.named_children:
        if child.type in ("herestring_redirect", "heredoc_redirect"):
            return True
        if child.type == "file_redirect" and any(
                not c.is_named and _text(c) in ("<", "<&", "<>") for c in child.children):
            return True
    return False


def _is_piped_into(node: Any) -> bool:
    """The command is a later stage of a pipeline (its stdin is another command's output)."""
    current = node
    while current.parent is not None and current.parent.type == "redirected_statement":
        current = current.parent
    parent = current.parent
    if parent is None or parent.type != "pipeline":
        return False
    return parent.named_children[0].id != current.id


def _unique(*forms: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for f in forms if f))


#: Programs whose first argument names a subcommand (``git push``), for suggested rules.
_SUBCOMMAND_PROGRAMS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "kubectl", "pip", "pip3",
    "uv", "poetry", "make", "gh", "dotnet", "mvn", "gradle", "terraform", "helm", "brew", "apt",
    "apt-get", "systemctl", "conda", "rustup", "deno", "swift", "hatch", "tox", "nox",
})
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]*$")


def suggested_prefix(segment: str) -> str:
    """The command prefix a ``Bash(<prefix>:*)`` rule for this command would name."""
    words = segment.split(" ")
    if len(words) > 1 and words[0] in _SUBCOMMAND_PROGRAMS and _SUBCOMMAND.match(words[1]):
        return " ".join(words[:2])
    return words[0]


__all__ = ["Command", "CommandLine", "Redirection", "analyze_command", "normalize",
           "suggested_prefix"]
