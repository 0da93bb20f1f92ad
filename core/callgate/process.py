"""The one door for every program a session starts (issue 30).

A shell command, a background job, a language server, an MCP server, ``rg``, ``git``:
every program a session starts is prepared here, and only here, so that three things
hold for all of them, whichever plugin starts them:

- **The sandbox.** The session's sandbox backend (the ``callgate_confine_process`` hook;
  ``contrib/sandbox`` implements it) wraps the program, with the workspace read-only or
  writable as the caller declares (`Access`) and with or without the network. A caller
  that would otherwise run workspace-controlled code says ``sandbox="required"``: where no
  backend confines the program, it is refused (`SANDBOX_REQUIRED`), never run unconfined.
- **The environment.** The program's variables come from `Environment`: the host's, without
  anything that looks like a credential (`is_secret`), with ``PATH`` cleaned of relative
  entries and of directories inside the workspace, so no program is ever resolved from
  the workspace; plus the caller's own values (from the user's config).
- **The lifetime.** Every program carries its session's marker in its environment
  (`MARKER`); when the session closes, the core ends whatever still carries it, however
  far it wandered from its process group (``setsid``, ``nohup``, an MCP server's
  grandchildren), and when the host process dies, a small helper does the same.

Use::

    from callgate import process

    prepared = process.prepare(ctx.session, ["rg", "--json", pattern], workspace="read",
                               cwd=ctx.workspace.root, purpose="grep")
    proc = prepared.popen(stdout=subprocess.PIPE)          # a blocking start
    proc = await prepared.start(stdout=asyncio.subprocess.PIPE)   # an asyncio start
    done = prepared.run(timeout=10)                        # start, wait, capture
    prepared.argv, prepared.env, prepared.cwd              # for a library that spawns itself

Plugins never call ``subprocess``, ``asyncio.create_subprocess_*``, ``os.exec*``,
``os.spawn*`` or ``anyio.open_process`` themselves (a test walks every plugin, contrib
package and example to make sure).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._model.errors import ToolError
from ._pipeline import lifeline as _lifeline
from ._pipeline.launch import Access, Confined, Launch, NoteFn

if TYPE_CHECKING:
    import asyncio

    from ._model.values import ToolCall
    from ._pipeline.view import SessionView

#: What a program needs from the sandbox: ``"required"`` (it would run workspace-controlled
#: code: refused where no backend confines it), ``"if_available"`` (confined where a backend
#: works, else run as it is) or ``"off"`` (a program of the user's own, outside the sandbox
#: on purpose: an MCP server of the user config, the host's helpers).
SandboxNeed = Literal["required", "if_available", "off"]

#: The variable that ties a program to the session (or host) that started it.
MARKER = _lifeline.MARKER
#: The signature of a program refused because it needs a sandbox that does not work here.
SANDBOX_REQUIRED = "SANDBOX_REQUIRED"

#: What ``Environment(inherit="minimal")`` takes from the host: what the MCP SDK passes its
#: servers (who to be, where home is, where programs are).
MINIMAL_NAMES: tuple[str, ...] = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)

#: A variable whose upper-cased name contains one of these is a secret (as Codex's default
#: ``shell_environment_policy`` excludes ``*KEY*``, ``*SECRET*``, ``*TOKEN*``).
SECRET_WORDS: tuple[str, ...] = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL")
#: ... or ends with one of these (GitHub PATs, Sentry DSNs, npm's ``_auth``, MySQL's password).
SECRET_SUFFIXES: tuple[str, ...] = ("_PAT", "_DSN", "_AUTH", "_PWD")
#: A value that is a URL with a password in it (``postgres://user:pw@host/db``).
_URL_WITH_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")


def is_secret(name: str, value: str | None = None, extra_names: Sequence[str] = ()) -> bool:
    """Whether a variable looks like a credential: by its name (`SECRET_WORDS`,
    `SECRET_SUFFIXES`, ``extra_names``, any case) or by its value (a URL with a password)."""
    upper = name.upper()
    if any(word in upper for word in SECRET_WORDS) or upper.endswith(SECRET_SUFFIXES):
        return True
    if upper in {n.upper() for n in extra_names}:
        return True
    return value is not None and bool(_URL_WITH_PASSWORD.match(value))


@attrs.frozen(kw_only=True)
class Environment:
    """Which variables a program gets.

    - ``inherit``: ``"all"`` (the host's environment) or ``"minimal"`` (`MINIMAL_NAMES`).
    - ``keep``: host variables passed too (under ``"minimal"``), secret-looking or not: the
      user listed them (an MCP server's ``env_passthrough``).
    - ``set``: the caller's own values (from the user's config, or forced settings such
      as ``TERM=dumb``), applied last and never filtered.
    - ``drop``: more names to treat as secrets (``[shell] secret_env_names``).
    - ``secrets``: pass secret-looking host variables (only when the user asked for it:
      ``[shell] filter_secret_env = false``).
    - ``path_from_workspace``: keep ``PATH`` as the host has it, relative entries and
      entries inside the workspace included (a shell command, which the model writes anyway);
      otherwise they are removed, so no program is resolved from the workspace.
    """

    inherit: Literal["all", "minimal"] = "all"
    keep: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    set: Mapping[str, str] = attrs.field(factory=dict)
    drop: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    secrets: bool = False
    path_from_workspace: bool = False

    def build(
        self, roots: Sequence[str] = (), base: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The environment, from ``base`` (default: the host's, read now); ``roots`` are the
        workspace directories ``PATH`` may not name."""
        source = os.environ if base is None else base
        if self.inherit == "all":
            env = dict(source)
        else:
            env = {k: source[k] for k in MINIMAL_NAMES if k in source}
        if not self.secrets:
            env = {k: v for k, v in env.items() if not is_secret(k, v, self.drop)}
        for name in self.keep:
            if name in source:
                env[name] = source[name]
        if "PATH" in env and not self.path_from_workspace:
            env["PATH"] = trusted_path(env["PATH"], roots)
        env.update(self.set)
        return env


def trusted_path(path: str, roots: Sequence[str] = ()) -> str:
    """``path`` without empty or relative entries (resolved against whatever directory a
    program runs in: the workspace) and without entries inside ``roots``."""
    kept = []
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if any(_within(real, root) or _within(entry, root) for root in roots):
            continue
        if entry not in kept:
            kept.append(entry)
    return os.pathsep.join(kept)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def which(name: str, session: SessionView | None = None, *, path: str | None = None) -> str | None:
    """Where program ``name`` is, looked up as the door does: on the host's ``PATH`` (or
    ``path``) without relative entries or entries inside ``session``'s workspace. A name
    with a directory part is returned as it is when it is an executable file."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    roots = session.workspace.read_roots if session is not None else ()
    search = trusted_path(os.environ.get("PATH", os.defpath) if path is None else path, roots)
    return shutil.which(name, path=search)


#: Popen/create_subprocess options the door sets itself.
_OWN_OPTIONS = frozenset({"args", "executable", "env", "cwd", "shell", "preexec_fn", "program"})


@attrs.frozen(kw_only=True)
class Prepared:
    """A program ready to start: start it with `popen`, `start` or `run`, or hand
    ``argv``/``env``/``cwd`` to a library that spawns itself (pygls, the MCP SDK).

    ``confined`` says whether the session's sandbox wraps it; ``launch`` is what was
    asked before that."""

    argv: tuple[str, ...] = attrs.field(converter=tuple)
    env: Mapping[str, str]
    cwd: str
    confined: bool
    launch: Launch
    note: NoteFn | None = None

    def _check(self, options: Mapping[str, Any]) -> None:
        own = sorted(_OWN_OPTIONS & set(options))
        if own:
            raise TypeError(f"the door sets {', '.join(own)} itself (from prepare())")

    def popen(self, **options: Any) -> subprocess.Popen[Any]:
        """Start it with `subprocess.Popen` (``options``: stdin, stdout, stderr,
        start_new_session, text, ...); raises `OSError` as Popen does."""
        self._check(options)
        return subprocess.Popen(list(self.argv), env=dict(self.env), cwd=self.cwd, **options)

    async def start(self, **options: Any) -> asyncio.subprocess.Process:
        """Start it with `asyncio.create_subprocess_exec` (on the running loop)."""
        import asyncio  # here: importing the door (every plugin that spawns) stays light

        self._check(options)
        return await asyncio.create_subprocess_exec(
            *self.argv, env=dict(self.env), cwd=self.cwd, **options
        )

    def run(
        self, *, input: bytes | str | None = None, timeout: float | None = None, text: bool = False
    ) -> subprocess.CompletedProcess[Any]:
        """Start it in a process group of its own with stdin from ``input`` (else the null
        device), wait at most ``timeout`` seconds and capture stdout and stderr. On timeout
        the whole group is killed and `subprocess.TimeoutExpired` raised."""
        stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
        proc = self.popen(
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=text,
            start_new_session=os.name == "posix",
        )
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            if os.name == "posix":
                kill_group(proc.pid)
            else:
                proc.kill()
            proc.communicate()
            raise
        return subprocess.CompletedProcess(list(self.argv), proc.returncode, out, err)


def kill_group(pgid: int, sig: int | None = None) -> None:
    """Signal process group ``pgid`` (a program started with ``start_new_session``; POSIX)
    with ``sig`` (default SIGKILL); a group that is gone already is no error."""
    try:
        os.killpg(pgid, signal.SIGKILL if sig is None else sig)
    except (ProcessLookupError, PermissionError):
        pass


def prepare(
    session: SessionView | None,
    argv: Sequence[str],
    *,
    workspace: Access = "read",
    network: bool = False,
    sandbox: SandboxNeed = "if_available",
    because: str = "",
    env: Environment | None = None,
    cwd: str | None = None,
    purpose: str = "",
    call: ToolCall | None = None,
    lifetime: Literal["session", "family"] = "session",
) -> Prepared:
    """Prepare one program ``session`` starts (``None``: the host itself starts it, outside
    any session and any sandbox: ``sandbox`` must then be ``"off"``).

    ``argv[0]`` is looked up on the cleaned ``PATH`` (`which`) unless it names a path;
    a missing program raises `FileNotFoundError`, as starting it would. ``cwd`` defaults to
    the workspace root. ``because`` completes the refusal of a ``sandbox="required"``
    program ("it runs the project's build scripts"). ``lifetime="family"`` ties the program
    to ``session.shared`` (ended when the session's last family member closes) instead of
    the session. Raises `ToolError` (``SANDBOX_REQUIRED``) when the sandbox is required and
    no backend confines programs here, and whatever the sandbox raises when it refuses.
    """
    if not argv:
        raise ValueError("argv is empty")
    if session is None and sandbox != "off":
        raise ValueError(
            'a program the host starts outside a session has no sandbox: say sandbox="off"'
        )
    spec = env or Environment()
    roots = session.workspace.read_roots if session is not None else ()
    environment = spec.build(roots)
    where = (
        cwd if cwd is not None else (session.workspace.root if session is not None else os.getcwd())
    )
    program = argv[0]
    if not (os.sep in program or (os.altsep and os.altsep in program)):
        search = trusted_path(environment.get("PATH") or os.defpath, roots)
        found = shutil.which(program, path=search)
        if found is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        program = found
    if session is not None:
        owner = session.shared if lifetime == "family" else session
        environment[MARKER] = _lifeline.scope_of(owner)
        _lifeline.lifeline.ensure()
    launch = Launch(
        argv=(program, *argv[1:]),
        env=environment,
        cwd=where,
        workspace=workspace,
        network=network,
        purpose=purpose,
        call=call,
    )
    confined: Confined | None = None
    if session is not None and sandbox != "off":
        confined = session.host.hooks.confine_process(launch, session)
    if confined is None:
        if sandbox == "required":
            raise ToolError(
                "unavailable",
                _refusal(purpose, because),
                SANDBOX_REQUIRED,
                {"executed": False, "purpose": purpose},
            )
        return Prepared(
            argv=launch.argv, env=dict(environment), cwd=where, confined=False, launch=launch
        )
    return Prepared(
        argv=tuple(confined.argv),
        env=dict(confined.env),
        cwd=confined.cwd,
        confined=True,
        launch=launch,
        note=confined.note,
    )


def _refusal(purpose: str, because: str) -> str:
    what = purpose or "the program"
    reason = f" {because}" if because else " it would run code from the workspace"
    return (
        f"{what} was not started:{reason}, which is allowed only inside the sandbox, and "
        "no sandbox confines programs in this session (`callgate plugins` says why; "
        "install callgate-sandbox and bubblewrap, or see docs/security.md)"
    )


def protected_paths(session: SessionView) -> list[str]:
    """The protected paths that exist in ``session``'s write roots, canonical and sorted:
    what a sandbox mounts read-only for the programs it confines (the host's config files,
    ``callgate.toml``, git's hooks and config, ``[files] protected``; see docs/security.md)."""
    return session.files.scope.protected_paths()


def hidden_paths(session: SessionView) -> list[str]:
    """The existing paths a sandbox hides from ``session``'s programs altogether, canonical
    and sorted: the state and user config directories and the session store's file."""
    from ._pipeline.hidden import hidden_paths as hidden

    return hidden(session)


__all__ = [
    "MARKER",
    "MINIMAL_NAMES",
    "SANDBOX_REQUIRED",
    "SECRET_SUFFIXES",
    "SECRET_WORDS",
    "Access",
    "Confined",
    "Environment",
    "Launch",
    "NoteFn",
    "Prepared",
    "SandboxNeed",
    "hidden_paths",
    "is_secret",
    "kill_group",
    "prepare",
    "protected_paths",
    "trusted_path",
    "which",
]
