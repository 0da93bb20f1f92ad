"""The plugin's hooks: choose the backend at boot, confine every program a session starts
(``callgate_confine_process``: shell commands and jobs, language servers, ``rg``, review's
``git``, MCP servers a workspace defines), and remove the session's private temp
directory when it closes.

Boot is where a sandbox that cannot work must fail: ``enabled = true`` with no
working backend is a config error, never an unconfined run. The default,
``enabled = "auto"``, confines wherever a backend works and otherwise runs
programs unconfined after one boot notice saying so (those that would run
workspace-controlled code are then refused by `callgate.process`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from callgate import Host, Registry, SessionKey, hookimpl
from callgate.host import BootError
from callgate.process import Confined, Launch, hidden_paths, protected_paths

from . import hookspecs
from ._backend import Backend, Policy, Probe, read_only_policy
from ._bwrap import BwrapBackend
from ._hints import refusal_hint
from .config import AUTO, CONFIG_SCHEMA, NONE, TABLE, ErrorFactory, SandboxConfig, read_config

log = logging.getLogger("callgate.sandbox")

#: What the lines saying the sandbox is off add: what runs, and what is refused.
UNCONFINED = ("programs sessions start run unconfined and those that would run "
              "workspace-controlled code are refused")

BUILT_IN: tuple[Callable[[], Backend], ...] = (BwrapBackend,)


@attrs.frozen
class ActiveSandbox:
    """What boot chose for one host: the config, and the backend (``None``: unconfined).

    ``unavailable`` says why ``enabled = "auto"`` found no backend that works here.
    """

    config: SandboxConfig
    backend: Backend | None = None
    probe: Probe | None = None
    unavailable: str | None = None

    def describe(self) -> str:
        """The ``callgate plugins`` line."""
        if self.backend is None or self.probe is None:
            if self.unavailable is not None:
                return (f'sandbox: off (enabled = "auto" and no backend works here: '
                        f"{self.unavailable}; {UNCONFINED})")
            if self.config.enabled is not False:
                return f'sandbox: none (backend = "none": {UNCONFINED})'
            return f"sandbox: off (enabled = false: {UNCONFINED})"
        extra = "".join(f", {p}" for p in self.config.writable)
        network = "network on" if self.config.network else \
            "no network (Unix sockets included)"
        return (f"sandbox: {self.backend.describe(self.probe)}; {network}; writable: "
                f"workspace (protected paths read-only), private /tmp{extra}")

    def notice(self) -> str | None:
        """The one-line boot notice when ``"auto"`` left commands unconfined."""
        if self.unavailable is None:
            return None
        return (f"sandbox: off, {UNCONFINED}: no sandbox backend works here "
                f'({self.unavailable}); install bubblewrap, or set [sandbox] enabled = false '
                "to say you want it off")


class SessionSandbox:
    """``session.extension(SANDBOX)``: the session's policy and its private temp directory."""

    def __init__(self, session: Any, active: ActiveSandbox | None) -> None:
        self.session = session
        self.active = active
        self.tmp_dir: str | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def backend(self) -> Backend | None:
        return self.active.backend if self.active is not None else None

    @property
    def read_only(self) -> bool:
        """A strict read-only session (a profile of it or of an ancestor says so)."""
        return any(getattr(p, "read_only", False) for p in getattr(self.session, "profiles", ()))

    def policy(self, launch: Launch | None = None) -> Policy:
        """The policy for one program of this session (its private temp dir created on first
        use): the workspace writable for ``launch.workspace == "write"`` (a shell command),
        read-only for ``"read"`` (a language server, ``rg``, review's ``git``); the network
        when the config allows it and the program asks for it. A strict read-only session's
        programs see the workspace read-only whatever they ask (`read_only_policy`)."""
        assert self.active is not None and self.backend is not None
        config = self.active.config
        workspace = self.session.workspace
        write_roots = tuple(workspace.write_roots)
        writes = launch is None or launch.workspace == "write"
        network = config.network and (launch is None or launch.network or
                                      not self._network_off_works())
        if not writes:
            # a program that only reads (a language server, rg, review's git) sees the
            # workspace read-only in every session; the user's [sandbox] writable paths
            # (its caches) stay as configured, strict read-only session or not
            return Policy(
                workspace=(), read_roots=tuple(workspace.read_roots),
                writable=config.writable, readable=config.readable, network=network,
                tmp_dir=self._temp_dir(), private_dirs=self.backend.private_dirs,
                hidden=tuple(hidden_paths(self.session)))
        policy = Policy(
            workspace=write_roots,
            read_roots=tuple(r for r in workspace.read_roots if r not in write_roots),
            writable=config.writable, readable=config.readable, network=network,
            tmp_dir=self._temp_dir(), private_dirs=self.backend.private_dirs,
            protected=() if self.read_only else tuple(protected_paths(self.session)),
            hidden=tuple(hidden_paths(self.session)))
        return read_only_policy(policy) if self.read_only else policy

    def _network_off_works(self) -> bool:
        """Whether the backend can take the network away here (bwrap: the Unix-socket
        filter loads); where it cannot, a program that does not ask for the network still
        gets it, as shell commands do under ``network = true``."""
        probe = getattr(self.backend, "probe_network_off", None)
        return not callable(probe) or bool(probe().ok)

    def _temp_dir(self) -> str:
        with self._lock:
            if self._closed:
                raise RuntimeError("the session is closed")
            if self.tmp_dir is None:
                self.tmp_dir = tempfile.mkdtemp(prefix="sandbox-tmp-",
                                                dir=self.session.scratch_dir())
            return self.tmp_dir

    def wrap(self, launch: Launch) -> Confined | None:
        """The confined launch, or ``None`` when this host runs programs unconfined."""
        backend = self.backend
        if backend is None:
            return None
        policy = self.policy(launch)
        new_argv, new_env, new_cwd = backend.wrap(launch.argv, launch.env, launch.cwd, policy)
        home = launch.env.get("HOME")
        cwd = launch.cwd

        def note(output: str, exit_code: int | None) -> str | None:
            return refusal_hint(output, exit_code, policy, cwd, home)

        return Confined(argv=new_argv, env=new_env, cwd=new_cwd, note=note)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            tmp, self.tmp_dir = self.tmp_dir, None
        if tmp is not None:
            for root, dirs, _files in os.walk(tmp):  # the read-only holders of binds
                for name in dirs:
                    with contextlib.suppress(OSError):
                        os.chmod(os.path.join(root, name), 0o700)
            shutil.rmtree(tmp, ignore_errors=True)


# --- boot -------------------------------------------------------------------------------



#: ``session.extension(SANDBOX)``: how the session's programs are confined
SANDBOX: SessionKey[SessionSandbox] = SessionKey("sandbox")

def _backends(host: Any) -> list[Backend]:
    backends: list[Backend] = [make() for make in BUILT_IN]
    for group in host.pm.hook.callgate_sandbox_backends():
        for backend in group or ():
            if not isinstance(backend, Backend):
                raise BootError(f"callgate_sandbox_backends returned {backend!r}, which is not "
                                "a callgate_sandbox.Backend")
            backends.append(backend)
    names: set[str] = set()
    for backend in backends:
        if not backend.name or backend.name in names or backend.name in (AUTO, NONE):
            raise BootError(f"sandbox backend name {backend.name!r} is empty, reserved or "
                            "registered twice")
        names.add(backend.name)
    return backends


def choose(config: SandboxConfig, backends: Sequence[Backend],
           error: ErrorFactory) -> ActiveSandbox:
    """The backend to use, probing only what the config asks for. When nothing asked for
    works: a `ConfigError` for ``enabled = true``, an unconfined sandbox that says why for
    ``"auto"``."""
    if config.enabled is False or config.backend == NONE:
        return ActiveSandbox(config)
    wanted = [b for b in backends if config.backend in (AUTO, b.name)]
    reasons = []
    for backend in wanted:
        probe = backend.probe()
        network_off = getattr(backend, "probe_network_off", None)
        if probe.ok and not config.network and callable(network_off):
            off = network_off()  # what network = false needs besides (bwrap: seccomp)
            probe = probe if off.ok else off
        if probe.ok:
            return ActiveSandbox(config, backend, probe)
        reasons.append(f"{backend.name}: {probe.detail}")
    if config.enabled == AUTO:
        return ActiveSandbox(config, unavailable="; ".join(reasons) or "no backend")
    key = "enabled" if config.backend == AUTO else "backend"
    raise error("the sandbox is enabled but no backend works on this machine ("
                + "; ".join(reasons) + '); fix that, or set [sandbox] enabled = false to '
                "run shell commands unconfined", (TABLE, key))


@hookimpl
def callgate_register_tools(registry: Registry, host: Host) -> None:
    """Claim ``[sandbox]``, check it, choose the backend, and add `SANDBOX`."""
    registry.add_hookspecs(hookspecs)
    table = registry.add_config(TABLE, CONFIG_SCHEMA)  # validated, layers merged
    backends = _backends(host)
    config = read_config(table, [b.name for b in backends], registry.config_error)
    active = choose(config, backends, registry.config_error)
    registry.add_info(active.describe())
    notice = active.notice()
    if notice is not None:
        log.warning(notice)
        host.warnings.append(notice)
    registry.add_session_extension(SANDBOX, lambda session: SessionSandbox(session, active))


@hookimpl
def callgate_confine_process(launch: Launch, session: Any) -> Confined | None:
    """Run the program inside the session's sandbox (``None``: the sandbox is off)."""
    sandbox = session.find_extension(SANDBOX)
    if not isinstance(sandbox, SessionSandbox):
        return None
    return sandbox.wrap(launch)


@hookimpl(trylast=True)
def callgate_session_end(session: Any) -> None:
    """Remove the private temp directory, after the shell plugin ended the session's jobs."""
    sandbox = session.find_extension(SANDBOX)
    if isinstance(sandbox, SessionSandbox):
        with contextlib.suppress(OSError):
            sandbox.close()


__all__ = ["ActiveSandbox", "SessionSandbox", "callgate_confine_process",
           "callgate_register_tools", "callgate_session_end", "choose"]
