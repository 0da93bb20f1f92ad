"""The ``callgate`` command: replay, tools, contract, call, plugins, demo, sessions (and serve).

Packages add commands through the ``callgate.commands`` entry-point group: each
entry point is a function ``register(subparsers)`` (``contrib/mcp-serve`` adds
``serve`` this way).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from callgate import Decision, hookspecs
from callgate.host import (
    NO_TOOLS,
    BootError,
    Host,
    entry_points,
    rendering,
    rendering_names,
    serve_worker,
)

if TYPE_CHECKING:  # argparse, the contract and `callgate.schema` load where used (issue 38)
    import argparse
    from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

DESCRIPTION = (
    "callgate hosts the built-in tools of an AI coding agent: every call is validated, "
    "permission-checked, run and shaped. Replay a transcript, run one call, list the tools "
    "and plugins, check the tool contract, or serve the tools to an MCP client."
)
EPILOG = (
    "examples:\n"
    '  callgate call read_file \'{"path": "README.md"}\'\n'
    "  callgate replay transcript.jsonl --workspace .\n"
    "  callgate tools --provider anthropic\n"
    "  callgate serve --workspace .          (with callgate-mcp-serve installed)\n\n"
    "-v/--verbose may come before or after the command."
)
#: ``--provider`` names: the renderings, and what users call them.
PROVIDER_ALIASES = {
    "openai": "openai-chat",
    "chat": "openai-chat",
    "responses": "openai-responses",
    "claude": "anthropic",
    "google": "gemini",
}
#: Words ending in a period that do not end a description's first sentence.
ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "incl", "approx", "no", "eg", "ie"})


class _ApproveAll:
    """The ``--approve all`` approver: allows every ``ask``."""

    @hookspecs.hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any, preview: Any) -> Decision:
        return Decision("allow", reason="approved by --approve all")


def _boot(
    args: argparse.Namespace,
    workspace: str | None = None,
    extra_plugins: Sequence[Any] = (),
    listing: bool = False,
) -> Host:
    host = Host.boot(
        getattr(args, "config", None),
        os=getattr(args, "os", None) or "auto",
        surface=getattr(args, "surface", None),
        workspace=workspace,
        plugins=list(extra_plugins),
        listing=listing,
    )
    _say_forced(host)
    return host


def _say_forced(host: Host) -> None:
    """Print, with or without ``-v``, what boot could not do as configured (a lean surface
    forced to full, no tool plugin installed)."""
    if logging.getLogger("callgate").isEnabledFor(logging.WARNING):
        return  # -v: the log has printed them already
    for message in host.forced:
        print(f"callgate: warning: {message}", file=sys.stderr)


def _fail(message: str) -> int:
    print(f"callgate: {message}", file=sys.stderr)
    return EXIT_USAGE


# --- replay ------------------------------------------------------------------------


def _read_lines(path: str) -> list[str]:
    """The transcript's lines; bytes that are not UTF-8 are kept (escaped) for the line
    that holds them to become a bad-line result, not to stop the replay."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    return data.decode("utf-8", "surrogateescape").splitlines()


async def _replay_session(
    host: Host,
    workspace: str,
    lines: list[str],
    mode: str,
    session_dir: str | None,
    emit: Any,
    resume: str | None = None,
    executor: list[str] | None = None,
    provider: str | None = None,
) -> None:
    from . import _replay  # the replay machinery: only here

    show: list[str] = []
    if provider is not None:
        show = rendering(provider).shows(host)
    async with host.open_session(
        workspace, session_dir=session_dir, resume=resume, executor=executor, show=show
    ) as session:
        if mode != "default":
            session.set_mode(mode)
        if provider is not None:
            async for item in _replay.replay_native(session, provider, lines):
                emit(None, item)
            return
        async for entry, result in _replay.replay(session, lines):
            emit(entry, result)


async def _replay_pair(
    host: Host, workspace: str, lines: list[str], session_dir: str | None, emit: Any
) -> None:
    """``replay --pair``: the lines before the approval line ``{"approve": true}`` go to the
    planner (plan mode, the planner profile), the approval hands over, the lines after it go
    to the executor; each result says whose it is (``meta.session``)."""
    from callgate.host import SessionPair

    from . import _replay  # the replay machinery: only here

    split = _replay.approval_index(lines)
    planning = lines if split is None else lines[:split]
    async with SessionPair(host, workspace, session_dir=session_dir) as pair:
        async for entry, result in _replay.replay(pair.planner, planning, modes=False):
            result["meta"]["session"] = "planner"
            emit(entry, result)
        if split is None:
            return
        pair.approve()
        async for entry, result in _replay.replay(
            pair.executor, lines[split + 1 :], split + 2, modes=False
        ):
            result["meta"]["session"] = "executor"
            emit(entry, result)


def _scripted_subagents(args: argparse.Namespace) -> list[tuple[str, Any]] | int:
    """The ``--subagents DIR`` runner as an in-process plugin (none without the option), or
    the exit code of a bad directory."""
    directory = getattr(args, "subagents", None)
    if directory is None:
        return []
    if not os.path.isdir(directory):
        return _fail(f"--subagents {directory} is not a directory")
    from ._scripted import ScriptedSubagents

    return [("callgate.scripted_subagents", ScriptedSubagents(directory))]


def cmd_replay(args: argparse.Namespace) -> int:
    import anyio  # the session machinery: imported by the commands that run calls only
    from callgate.store import StoreError

    from . import _replay  # the replay machinery: only here

    try:
        lines = _read_lines(args.transcript)
    except OSError as exc:
        return _fail(f"cannot open transcript {args.transcript}: {exc.strerror or exc}")
    executor = _executor_option(args.executor)
    if isinstance(executor, int):
        return executor
    if args.pair and (args.resume or args.mode != "default" or executor or args.provider):
        return _fail(
            "--pair runs a new planner and executor here: the approval line sets their "
            "modes, so it takes neither --mode, --resume, --executor nor --provider"
        )
    if args.provider:
        try:
            rendering(args.provider)  # installed (callgate-providers), else say so
        except ValueError as exc:
            return _fail(str(exc))
    approver: list[tuple[str, Any]] = []
    if args.approve == "all":
        approver.append(("callgate.cli.approve_all", _ApproveAll()))
    scripted = _scripted_subagents(args)
    if isinstance(scripted, int):
        return scripted
    if args.answers:
        try:
            approver.append(("callgate.cli.answers", _replay.AnswerFile.load(args.answers)))
        except ValueError as exc:
            return _fail(str(exc))
    try:
        host = _boot(args, args.workspace, approver + scripted)
    except BootError as exc:
        return _fail(str(exc))
    table = host.config("executor")
    remote = executor if executor is not None else (table["transport"] or table["url"])
    if not remote and not os.path.isdir(args.workspace):
        # with a worker the workspace is the worker's: it need not exist here
        return _fail(f"workspace {args.workspace} is not a directory")

    def emit(entry: _replay.Entry, result: dict[str, Any]) -> None:
        print(_replay.json_line(result), flush=True)

    try:
        if args.pair:
            anyio.run(_replay_pair, host, args.workspace, lines, args.session_dir, emit)
        else:
            anyio.run(
                _replay_session,
                host,
                args.workspace,
                lines,
                args.mode,
                args.session_dir,
                emit,
                args.resume,
                executor,
                args.provider,
            )
    except StoreError as exc:  # an unknown session, a store this callgate cannot use
        return _fail(str(exc))
    return EXIT_OK


def _executor_option(value: str | None) -> list[str] | int | None:
    """``--executor '<JSON argv>'``: the argv (``[]``: run here, whatever the config
    says), ``None`` when not given, or the exit code of a bad value."""
    if value is None:
        return None
    try:
        argv = json.loads(value)
    except json.JSONDecodeError as exc:
        return _fail(f"--executor must be a JSON array of strings (an argv): {exc.msg}")
    if not isinstance(argv, list) or not all(isinstance(a, str) and a for a in argv):
        return _fail(
            '--executor must be a JSON array of non-empty strings, e.g. \'["callgate", '
            '"worker", "--workspace", "{workspace}"]\''
        )
    return argv


# --- the worker ---------------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.workspace):
        return _fail(f"workspace {args.workspace} is not a directory")
    if args.listen is None:
        if args.token_file is not None or args.token_env is not None:
            return _fail("--token-file and --token-env go with --listen")
        try:
            return serve_worker(args.workspace)
        except BootError as exc:
            return _fail(str(exc))
    try:
        return serve_worker(
            args.workspace,
            listen=args.listen,
            token_file=args.token_file,
            token_env=args.token_env,
        )
    except (BootError, ValueError) as exc:
        return _fail(str(exc))


# --- tools, contract, call, plugins ---------------------------------------------------------


def cmd_tools(args: argparse.Namespace) -> int:
    # listed from the plugin manifest when it can answer (no plugin imported, issue 38); a
    # provider's rendering reads the tools' native faces (code) and -v the plugins' notices
    listing = not args.provider and not args.verbose
    try:
        host = _boot(args, listing=listing)
    except BootError as exc:
        return _fail(str(exc))
    if args.provider or args.json:
        try:
            if args.provider:
                tools = rendering(args.provider).surface(host)
            else:
                from callgate.schema import contract_entry

                tools = [contract_entry(spec) for spec in host.surface_specs()]
        except ValueError as exc:
            return _fail(str(exc))
        print(json.dumps(tools, indent=2, ensure_ascii=False))
        return EXIT_OK
    for name in host.visible_names():
        spec = host.registry.get(name)
        assert spec is not None
        flag = "read-only" if spec.contract_read_only else "writes"
        print(f"{name:<16} {flag:<9} {first_sentence(spec.description)}")
    _say_unhooked(host)
    return EXIT_OK


def _say_unhooked(host: Host) -> None:
    """The registered tools no session can have, and the integrator hooks they wait for."""
    for name, hooks in sorted(host.unhooked().items()):
        print(
            f"callgate: not listed: {name} (needs an implementation of {', '.join(hooks)}, "
            "an integrator hook)",
            file=sys.stderr,
        )


def first_sentence(text: str) -> str:
    """The first sentence of a description, without its period: a ``. `` ends it unless
    the word before is an abbreviation (``e.g.``) or a single letter (an initial)."""
    start = 0
    while True:
        end = text.find(". ", start)
        if end < 0:
            return text.rstrip().rstrip(".")
        word = text[:end].rsplit(None, 1)[-1].lstrip("(\"'`").lower() if text[:end].strip() else ""
        if word not in ABBREVIATIONS and len(word) > 1:
            return text[:end]
        start = end + 2


def _contract_text(installed: bool = False) -> str:
    """The contract of the built-in tool families, or with ``installed`` of every installed
    plugin, third-party ones included (``CALLGATE_LOAD_PLUGINS`` overrides both)."""
    from . import _contract

    chosen = (
        True
        if installed or os.environ.get("CALLGATE_LOAD_PLUGINS")
        else _contract.builtin_families()
    )
    posix = Host.boot({}, os="posix", surface="lean", entrypoints=chosen)
    windows = Host.boot({}, os="windows", surface="lean", entrypoints=chosen)
    return _contract.generate(posix, windows)


def cmd_contract(args: argparse.Namespace) -> int:
    try:  # the committed document is callgate's own; what you print shows what is installed
        text = _contract_text(installed=not (args.write or args.check))
    except BootError as exc:
        return _fail(str(exc))
    from pathlib import Path

    path = Path(args.path)
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
        return EXIT_OK
    if args.check:
        if not path.is_file():
            print(
                f"callgate: {path} is missing, so there is nothing to check: run this in a "
                "callgate checkout, pass --path to the committed contract, or create it "
                "with `callgate contract --write`",
                file=sys.stderr,
            )
            return EXIT_FAILED
        from . import _contract

        diff = _contract.drift(path, text)
        if diff:
            print(
                f"{path} differs from the registry; run `callgate contract --write`",
                file=sys.stderr,
            )
            shown = diff[:60] + (
                [f"... ({len(diff) - 60} more diff lines)"] if len(diff) > 60 else []
            )
            print("\n".join(shown), file=sys.stderr)
            return EXIT_FAILED
        print(f"{path} matches the registry")
        return EXIT_OK
    sys.stdout.write(text)
    return EXIT_OK


def cmd_call(args: argparse.Namespace) -> int:
    """One call through a fresh session; exit 0 when its result is a success, 1 when it is
    an error (invalid arguments, refused, failed), 2 when it cannot run at all."""
    import anyio
    from callgate.store import StoreError

    from . import _replay  # the replay machinery: only here

    line = json.dumps({"id": "c1", "name": args.name, "arguments": args.arguments})
    workspace = args.workspace or os.getcwd()
    if not os.path.isdir(workspace):
        return _fail(f"workspace {workspace} is not a directory")
    scripted = _scripted_subagents(args)
    if isinstance(scripted, int):
        return scripted
    try:
        host = _boot(args, workspace, scripted)
    except BootError as exc:
        return _fail(str(exc))
    errors: list[bool] = []

    def emit(entry: _replay.Entry, result: dict[str, Any]) -> None:
        errors.append(bool(result["is_error"]))
        print(_replay.json_line(result, indent=2))

    try:
        anyio.run(_replay_session, host, workspace, [line], args.mode, None, emit)
    except StoreError as exc:
        return _fail(str(exc))
    return EXIT_FAILED if any(errors) else EXIT_OK


def cmd_plugins(args: argparse.Namespace) -> int:
    try:
        host = _boot(args)
    except BootError as exc:
        return _fail(str(exc))
    for info in host.plugins():
        version = info.version or "-"
        tools = ", ".join(info.tools) or "(no tools)"
        print(f"{info.name}  {version}  {info.source}\n    tools: {tools}")
        for line in info.info:
            print(f"    {line}")
    return EXIT_OK


# --- demo -------------------------------------------------------------------------------------


def examples_dir() -> Path | None:
    """The repository's ``examples/`` (the demo's tour and workspace), if present."""
    from pathlib import Path  # here: pathlib, shutil and tempfile serve the demo only

    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "examples", Path.cwd() / "examples"):
        if (candidate / "tour.jsonl").is_file():
            return candidate
    return None


def _summary(arguments: Any, limit: int = 100) -> str:
    text = (
        json.dumps(arguments, ensure_ascii=False) if not isinstance(arguments, str) else arguments
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def _demo_state_dir(path: str) -> Iterator[None]:
    """Point callgate's state directory at ``path`` while the demo runs: what the tour
    remembers goes away with the temporary workspace, never into the user's state dir."""
    from callgate.paths import HOME_VARIABLE  # the demo only: paths pulls the file API

    previous = os.environ.get(HOME_VARIABLE)
    os.environ[HOME_VARIABLE] = path
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(HOME_VARIABLE, None)
        else:
            os.environ[HOME_VARIABLE] = previous


def cmd_demo(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    import anyio

    from . import _replay  # the replay machinery: only here

    examples = examples_dir()
    if examples is None:
        return _fail("cannot find examples/tour.jsonl (run the demo from a callgate checkout)")
    lines = (examples / "tour.jsonl").read_text(encoding="utf-8").splitlines()
    with (
        tempfile.TemporaryDirectory(prefix="callgate-demo-") as tmp,
        _demo_state_dir(os.path.join(tmp, "state")),
    ):
        workspace = os.path.join(tmp, "workspace")
        shutil.copytree(examples / "workspace", workspace, symlinks=True)
        config = examples / "tour.toml"
        try:
            host = Host.boot(config if config.is_file() else None, workspace=workspace)
        except BootError as exc:
            return _fail(str(exc))
        if not host.registry.names():
            return _fail(f"{NO_TOOLS}; the demo needs the built-in tools")
        _say_forced(host)
        print(
            f"callgate demo: replaying {len(lines)} lines of examples/tour.jsonl in a "
            f"temporary copy of examples/workspace ({workspace})\n"
        )

        def emit(entry: _replay.Entry, result: dict[str, Any]) -> None:
            raw = entry.raw if isinstance(entry.raw, dict) else {}
            mark = "✗" if result["is_error"] else "✓"
            kind = f"  [{result['error']['kind']}]" if result["error"] else ""
            print(f"{mark} {result['name']}({_summary(raw.get('arguments', {}))}){kind}")
            content = result["content"]
            if not isinstance(content, str):
                content = "\n".join(
                    b.get("text") or f"<{b['media_type']} image, {b['bytes']} bytes>"
                    for b in content
                )
            for text_line in content.splitlines() or [""]:
                print(f"    {text_line}")
            print()

        anyio.run(_replay_session, host, workspace, lines, "default", None, emit)
    print("demo finished; the temporary workspace was removed and the repository is untouched")
    return EXIT_OK


# --- parser -----------------------------------------------------------------------------------


def _add_boot_options(p: argparse.ArgumentParser, config: bool = True) -> None:
    p.add_argument(
        "--os",
        choices=["posix", "windows"],
        help="the OS whose tools to show (default: this machine's)",
    )
    p.add_argument(
        "--surface",
        choices=["lean", "full"],
        help="surface mode (default: [surface] mode in the config, else lean)",
    )
    if config:
        p.add_argument(
            "--config",
            help="a callgate.toml to use (default: the workspace's "
            "callgate.toml or [tool.callgate] in pyproject.toml)",
        )


def _provider(value: str) -> str:
    return PROVIDER_ALIASES.get(value, value)


def _add_verbose(p: argparse.ArgumentParser, default: Any = False) -> None:
    import argparse

    try:
        p.add_argument(
            "-v", "--verbose", action="store_true", default=default, help="log warnings to stderr"
        )
    except argparse.ArgumentError:  # a command plugin added its own
        pass


def _command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


class _Reparse(Exception):
    """A parser built without the renderings met an error: parse with the full one."""


def _without_renderings() -> type[argparse.ArgumentParser]:
    import argparse

    class _WithoutRenderings(argparse.ArgumentParser):
        """The parser of an ``argv`` with no ``--provider`` and no help: the renderings
        (their package) are not loaded for the choices; any error is left to the full
        parser, whose usage line and message name them."""

        def error(self, message: str) -> Any:
            raise _Reparse(message)

    return _WithoutRenderings


#: the options an ``argv`` may hold for the parser without the renderings (what
#: ``callgate tools``, ``plugins``, ``contract`` take: no ``--provider``, no help)
_PLAIN_OPTIONS = frozenset(
    {"-v", "--verbose", "--json", "--os", "--surface", "--config", "--check", "--write"}
)


def _needs_renderings(argv: Sequence[str]) -> bool:
    """Whether ``argv`` holds an option other than the plain ones (``--provider`` and its
    abbreviations, help, anything unusual): the parser then lists the renderings."""
    return any(
        word.startswith("-") and word.partition("=")[0] not in _PLAIN_OPTIONS for word in argv
    )


def build_parser(
    argv: Sequence[str] | None = None, *, renderings: bool = True
) -> argparse.ArgumentParser:
    """The ``callgate`` parser. Given the ``argv`` it will parse, a core command leaves the
    ``callgate.commands`` add-ons unloaded (importing ``serve`` or ``rules`` is no part of
    ``callgate tools``' cold start, issue 38); help, an add-on's command or an unknown word
    loads them all, so they are listed and parsed as before. Without ``renderings`` the
    ``--provider`` choices are left out and an error raises `_Reparse` (see `main`)."""
    import argparse

    from . import _contract

    # the installed renderings (callgate-providers registers them)
    PROVIDERS = rendering_names(native=False) if renderings else []
    NATIVE_PROVIDERS = rendering_names(native=True) if renderings else []

    parser = (argparse.ArgumentParser if renderings else _without_renderings())(
        prog="callgate",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_verbose(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "replay",
        help="run a JSON-Lines transcript through one session",
        description="Run a JSON-Lines transcript (one call, a batch, or a "
        '{"mode": ...} line per line) through one session and '
        "print one JSON result per call.",
    )
    p.add_argument("transcript", help="the transcript file, or - for stdin")
    p.add_argument("--workspace", required=True, help="the directory the tools work in")
    _add_boot_options(p)
    p.add_argument(
        "--approve",
        choices=["none", "all"],
        default="none",
        help="the approver for ask permissions (default: none)",
    )
    p.add_argument(
        "--mode",
        choices=["default", "plan"],
        default="default",
        help="start in this mode (default: default); plan allows only read-only "
        'calls until a {"mode": "default"} line approves the plan',
    )
    p.add_argument(
        "--session-dir",
        help="a scratch directory for the session (job logs); reopening it continues its session",
    )
    p.add_argument(
        "--resume",
        metavar="ID",
        help="continue a stored session (its id, name or "
        "a unique id prefix): its observations, "
        "results, goals, todos and jobs",
    )
    p.add_argument(
        "--subagents",
        metavar="DIR",
        help="run subagents from transcripts in DIR instead of a model: a child "
        "reads DIR/<slug of its description>.jsonl, else DIR/child-<N>.jsonl "
        "(docs/subagents.md)",
    )
    p.add_argument(
        "--provider",
        type=_provider,
        choices=NATIVE_PROVIDERS or None,  # none installed: the command says so
        metavar="PROVIDER",
        help="read raw call items of this native rendering, one per line (a JSON list for "
        "a batch), and print its raw result items, one per line: "
        f"{', '.join(NATIVE_PROVIDERS)} (docs/providers.md)",
    )
    p.add_argument(
        "--answers",
        metavar="FILE",
        help='answer the ask tool from FILE: {"answers": {"question or header": '
        '"label" | ["label", ...] | null}} (docs/ask.md)',
    )
    p.add_argument(
        "--executor",
        metavar="JSON_ARGV",
        help="run the session's tools on a worker started by this argv (a JSON array: "
        '\'["ssh", "box", "callgate", "worker", "--workspace", "{workspace}"]\'), '
        "overriding [executor] transport; --workspace is then the workspace as the worker "
        "sees it; '[]' runs them here (docs/executors.md)",
    )
    p.add_argument(
        "--pair",
        action="store_true",
        help="run a planner and an executor (docs/subagents.md): the lines before "
        'an approval line {"approve": true} go to the planner, the lines '
        "after it to the executor; results carry meta.session",
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "worker",
        help="serve one workspace's tools over stdio (a remote executor)",
        description="Serve the executor protocol (JSON-RPC over stdin/stdout) for the "
        "workspace DIR: a host whose [executor] transport starts this command runs its "
        "sessions' tools here, next to the files (docs/executors.md).",
    )
    p.add_argument("--workspace", required=True, help="the directory the tools work in")
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="serve over a websocket on HOST:PORT instead of stdio; hosts must present the "
        "bearer token (--token-file or --token-env)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="with --listen: the bearer token is the first line of FILE that is not blank "
        "or a # comment",
    )
    p.add_argument(
        "--token-env",
        metavar="NAME",
        help="with --listen: the bearer token is the value of the environment variable NAME "
        "(never the token itself on the command line, which other users can read)",
    )
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("tools", help="list the provider-visible tools")
    _add_boot_options(p)
    p.add_argument(
        "--provider",
        type=_provider,
        choices=[*PROVIDERS, *NATIVE_PROVIDERS] or None,
        metavar="PROVIDER",
        help="print that provider's tool definitions, exactly as sent: "
        f"{', '.join((*PROVIDERS, *NATIVE_PROVIDERS))} (openai means openai-chat)",
    )
    p.add_argument("--json", action="store_true", help="print canonical entries as JSON")
    p.set_defaults(func=cmd_tools)

    p = sub.add_parser(
        "contract",
        help="generate or check docs/TOOL_CONTRACT.md",
        description="Print the tool contract of every installed plugin "
        "(third-party ones included), or write or check "
        "callgate's own (the built-in families) at --path.",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the contract to --path")
    group.add_argument(
        "--check", action="store_true", help="exit 1 when the file at --path is missing or differs"
    )
    p.add_argument(
        "--path",
        default=_contract.DOC_PATH,
        help=f"the contract file (default: {_contract.DOC_PATH})",
    )
    p.set_defaults(func=cmd_contract)

    p = sub.add_parser(
        "call",
        help="run one call and print its result",
        description="Run one call through a fresh session and print its "
        "result as JSON; exit 1 when the result is an error.",
    )
    p.add_argument("name", help="the tool to call, e.g. read_file")
    p.add_argument("arguments", help='the arguments as a JSON object, e.g. \'{"path": "a"}\'')
    p.add_argument(
        "--workspace", help="the directory the tools work in (default: the current directory)"
    )
    p.add_argument(
        "--mode",
        choices=["default", "plan"],
        default="default",
        help="the session's mode (default: default)",
    )
    p.add_argument(
        "--subagents",
        metavar="DIR",
        help="run subagents from transcripts in DIR (as replay --subagents)",
    )
    _add_boot_options(p)
    p.set_defaults(func=cmd_call)

    p = sub.add_parser("plugins", help="list plugins, versions, tools and origins")
    _add_boot_options(p)
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("demo", help="replay examples/tour.jsonl in a temporary workspace")
    p.set_defaults(func=cmd_demo)

    core_command = argv is not None and _command_word(argv) in sub.choices
    for ep in () if core_command else entry_points("callgate.commands"):
        try:
            ep.load()(sub)
        except Exception as exc:  # a broken add-on must not break the core commands
            print(f"callgate: command plugin {ep.name} failed to load: {exc}", file=sys.stderr)
    for command in sub.choices.values():
        _add_verbose(command, default=argparse.SUPPRESS)  # -v after the command too
    return parser


#: The commands `plain_args` answers without argparse, and the flags (no value) each
#: takes after its word; ``-v``/``--verbose`` may also come before it.
_PLAIN_COMMANDS: dict[str, frozenset[str]] = {
    "tools": frozenset({"-v", "--verbose", "--json"}),
    "plugins": frozenset({"-v", "--verbose"}),
}
_VERBOSE = frozenset({"-v", "--verbose"})


def plain_args(argv: Sequence[str]) -> Any:
    """What the parser makes of a plain ``callgate tools`` or ``plugins`` (the command word
    and flags that take no value), without building it: argparse, gettext, locale and
    shutil with its compressors are ~11 of the modules a cold ``callgate tools`` would
    import (issue 38). ``None`` for any other ``argv``: the parser reads it (help, errors
    and every option as before). tests/core/test_cli_plain_args.py checks the answer is
    argparse's for every such ``argv``."""
    words = [w for w in argv if not w.startswith("-")]
    if len(words) != 1 or words[0] not in _PLAIN_COMMANDS:
        return None
    command = words[0]
    at = list(argv).index(command)
    before, after = argv[:at], argv[at + 1 :]
    if not set(before) <= _VERBOSE or not set(after) <= _PLAIN_COMMANDS[command]:
        return None
    from types import SimpleNamespace

    values: dict[str, Any] = {"verbose": bool(_VERBOSE & {*before, *after}), "command": command}
    values.update(os=None, surface=None, config=None)
    if command == "tools":
        values.update(provider=None, json="--json" in after, func=cmd_tools)
    else:
        values.update(func=cmd_plugins)
    return SimpleNamespace(**values)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = plain_args(argv)
    if args is None:
        try:
            # a plain argv (callgate tools) is parsed without loading the renderings
            if _needs_renderings(argv):
                raise _Reparse
            args = build_parser(argv, renderings=False).parse_args(argv)
        except _Reparse:
            args = build_parser(argv).parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.verbose else logging.ERROR, format="callgate: %(message)s"
    )
    # a host without a session-store backend keeps no sessions: said with or without -v
    logging.getLogger("callgate.store.memory").setLevel(logging.WARNING)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
