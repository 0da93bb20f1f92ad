"""The plugin's hooks: choose the backend at boot, wrap every shell command of a session,
and remove the session's private temp directory when it closes.

Boot is where a sandbox that cannot work must fail: ``enabled = true`` with no
working backend is a config error, never an unconfined run. The default,
``enabled = "auto"``, confines wherever a backend works and otherwise runs
commands unconfined after one boot notice saying so.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from callgate import BootError, Host, Registry, hookimpl
from callgate.files import hidden_paths, protected_paths

from . import hookspecs
from ._backend import Backend, Policy, Probe
from ._bwrap import BwrapBackend
from ._config import AUTO, CONFIG_SCHEMA, NONE, TABLE, ErrorFactory, SandboxConfig, read_config
from ._hints import refusal_hint

log = logging.getLogger("callgate.sandbox")

EXTENSION = "sandbox"
BUILT_IN: tuple[Callable[[], Backend], ...] = (BwrapBackend,)

NoteFn = Callable[[str, "int | None"], "str | None"]


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
                        f"{self.unavailable}; shell commands run unconfined)")
            if self.config.enabled is not False:
                return 'sandbox: none (backend = "none": shell commands run unconfined)'
            return "sandbox: off (enabled = false: shell commands run unconfined)"
        extra = "".join(f", {p}" for p in self.config.writable)
        network = "network on" if self.config.network else \
            "no network (Unix sockets included)"
        return (f"sandbox: {self.backend.describe(self.probe)}; {network}; writable: "
                f"workspace (protected paths read-only), private /tmp{extra}")

    def notice(self) -> str | None:
        """The one-line boot notice when ``"auto"`` left commands unconfined."""
        if self.unavailable is None:
            return None
        return (f"sandbox: off, shell commands run unconfined: no sandbox backend works here "
                f'({self.unavailable}); install bubblewrap, or set [sandbox] enabled = false '
                "to say you want it off")


class SessionSandbox:
    """``session.sandbox``: the session's policy and its private temp directory."""

    def __init__(self, session: Any, active: ActiveSandbox | None) -> None:
        self.session = session
        self.active = active
        self.tmp_dir: str | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def backend(self) -> Backend | None:
        return self.active.backend if self.active is not None else None

    def policy(self) -> Policy:
        """The policy for this session's commands (its private temp dir created on first use)."""
        assert self.active is not None and self.backend is not None
        config = self.active.config
        workspace = self.session.workspace
        write_roots = tuple(workspace.write_roots)
        return Policy(
            workspace=write_roots,
            read_roots=tuple(r for r in workspace.read_roots if r not in write_roots),
            writable=config.writable, readable=config.readable, network=config.network,
            tmp_dir=self._temp_dir(), private_dirs=self.backend.private_dirs,
            protected=tuple(protected_paths(self.session)),
            hidden=tuple(hidden_paths(self.session)))

    def _temp_dir(self) -> str:
        with self._lock:
            if self._closed:
                raise RuntimeError("the session is closed")
            if self.tmp_dir is None:
                self.tmp_dir = tempfile.mkdtemp(prefix="sandbox-tmp-",
                                                dir=self.session.scratch_dir())
            return self.tmp_dir

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: str
             ) -> tuple[list[str], dict[str, str], str, NoteFn] | None:
        """The confined launch, or ``None`` when this host runs commands unconfined."""
        backend = self.backend
        if backend is None:
            return None
        policy = self.policy()
        new_argv, new_env, new_cwd = backend.wrap(argv, env, cwd, policy)
        home = env.get("HOME")

        def note(output: str, exit_code: int | None) -> str | None:
            return refusal_hint(output, exit_code, policy, cwd, home)

        return new_argv, new_env, new_cwd, note

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
    """Claim ``[sandbox]``, check it, choose the backend, and add ``session.sandbox``."""
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
    registry.add_session_extension(EXTENSION, lambda session: SessionSandbox(session, active))


@hookimpl(optionalhook=True)
def callgate_wrap_command(argv: list[str], env: dict[str, str], cwd: str, session: Any,
                          call: Any) -> tuple[list[str], dict[str, str], str, NoteFn] | None:
    """Run the command inside the session's sandbox (``None``: the sandbox is off)."""
    sandbox = getattr(session, EXTENSION, None)
    if not isinstance(sandbox, SessionSandbox):
        return None
    return sandbox.wrap(argv, env, cwd)


@hookimpl(trylast=True)
def callgate_session_end(session: Any) -> None:
    """Remove the private temp directory, after the shell plugin ended the session's jobs."""
    sandbox = getattr(session, EXTENSION, None)
    if isinstance(sandbox, SessionSandbox):
        with contextlib.suppress(OSError):
            sandbox.close()


__all__ = ["ActiveSandbox", "SessionSandbox", "callgate_register_tools",
           "callgate_session_end", "callgate_wrap_command", "choose"]
