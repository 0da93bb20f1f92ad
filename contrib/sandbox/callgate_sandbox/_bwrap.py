"""The Linux backend: bubblewrap (``bwrap``, Debian package ``bubblewrap``).

The layout inside, in mount order (later mounts cover earlier ones):

- the host's whole filesystem, read-only (``--ro-bind / /``), without device
  nodes or setuid effects;
- a minimal ``/dev`` (null, zero, random, tty, shm, ...) and a ``/proc`` that
  shows only the sandbox's own processes (``--unshare-pid``);
- ``/run`` replaced by an empty tmpfs (it holds the sockets of docker, dbus, the
  user's agents: a read-only mount does not stop ``connect()``), except the
  resolver's directory when the network is on;
- ``/tmp`` is the session's private temp directory;
- the hidden paths (`Policy.hidden`: the session store, callgate's state and user
  config directories) replaced by an empty read-only tmpfs (a file by ``/dev/null``):
  before the binds when a bind lies inside one (the workspace under the state
  directory shows through), after them otherwise;
- ``readable`` paths read-only, ``writable`` paths and the workspace read-write;
- the protected paths in the workspace (`Policy.protected`: the host's config
  files, ``.git/hooks``, ``.git/config``, ...) read-only, and every directory
  between the workspace and one of them bound onto itself, so that it is a
  mount point: renaming it away (``mv .git .g``) fails with ``EBUSY`` instead
  of leaving a writable copy where the protected path was.

Without ``network`` the sandbox has its own network namespace with only a
loopback device, so nothing outside is reachable, the host's loopback
included, and a seccomp filter (`_seccomp`) refuses Unix sockets, which would
otherwise reach the host's daemons through their socket files. As root, every
capability is dropped, so a command cannot remount its way out.
``--die-with-parent`` and the pid namespace make killing the outer ``bwrap``
end the whole confined tree; ``--new-session`` is not used, so the tree stays
in the process group the shell plugin signals.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

import attrs
from callgate import ToolError, process

from ._backend import Backend, Policy, Probe, within
from ._seccomp import SeccompUnavailable, filter_path

#: opens the seccomp filter as fd 3 for bwrap's ``--seccomp 3``, then becomes bwrap; a
#: filter that cannot be opened stops the command (it never runs without it)
LAUNCHER = ("/bin/sh", "-c", 'exec 3<"$0" || exit 125; exec "$@"')

PROBE_TIMEOUT_S = 10.0
RESOLV_CONF = "/etc/resolv.conf"

_probe_cache: dict[tuple[object, ...], Probe] = {}
_probe_lock = threading.Lock()


class BwrapBackend(Backend):
    """Confine commands with ``bwrap`` found on ``PATH`` (or at ``program``)."""

    name = "bwrap"
    private_dirs = ("/tmp", "/run")

    def __init__(self, program: str = "bwrap") -> None:
        self.program = program
        self.path: str | None = None

    # --- boot -----------------------------------------------------------------------

    def probe(self) -> Probe:
        """Runs ``bwrap ... true`` with every namespace this backend uses (cached per
        binary and user for the life of the process: boots are frequent in tests)."""
        if not sys.platform.startswith("linux"):
            return Probe(False, f"bubblewrap needs Linux; this is {sys.platform}")
        found = process.which(self.program)  # never a relative PATH entry (the cwd's)
        if found is None:
            return Probe(False, f"the {self.program!r} program is not on PATH; install "
                                "bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)")
        self.path = found
        key = (os.path.realpath(found), os.geteuid())
        with _probe_lock:
            cached = _probe_cache.get(key)
            if cached is None:
                cached = _probe_cache[key] = _run_probe(found)
        return cached

    def probe_network_off(self) -> Probe:
        """Whether commands can run with the network off here: bwrap with the Unix-socket
        filter loaded (`_seccomp`; built on first need, as it loads libseccomp)."""
        base = self.probe()
        if not base.ok or self.path is None:
            return base
        key = (os.path.realpath(self.path), os.geteuid(), "seccomp")
        with _probe_lock:
            cached = _probe_cache.get(key)
            if cached is None:
                cached = _probe_cache[key] = _run_probe(self.path, seccomp=True)
        return cached

    # --- one command ------------------------------------------------------------------

    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, policy: Policy
             ) -> tuple[list[str], dict[str, str], str]:
        program = self.path or process.which(self.program) or self.program
        kept = _programs_under_tmp(argv)
        if kept:  # the private /tmp would hide the program itself (a checkout under /tmp)
            policy = attrs.evolve(policy, readable=(*policy.readable, *kept))
        launcher: list[str] = []
        args = [program, *namespace_args(policy.network)]
        if not policy.network:
            try:
                launcher = [*LAUNCHER, filter_path()]
            except SeccompUnavailable as exc:  # never run it with the sockets reachable
                raise ToolError("tool_error", f"the sandbox cannot keep Unix sockets out of "
                                f"reach here ({exc}), so with [sandbox] network = false no "
                                "command runs; nothing was run", "SANDBOX_UNAVAILABLE",
                                {"executed": False}) from None
            args += ["--seccomp", "3"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if os.path.isdir("/run") and not os.path.islink("/run"):
            args += ["--tmpfs", "/run"]
        args += ["--bind", policy.tmp_dir, "/tmp"]
        hide_first, hide_last = hidden_args(policy)
        args += hide_first
        tmpdir = env.get("TMPDIR", "")
        tmpdir = os.path.normpath(tmpdir) if os.path.isabs(tmpdir) else ""
        prepare_private_tmp(policy, tmpdir)
        if policy.network:
            for directory in resolver_dirs():
                args += ["--ro-bind-try", directory, directory]
        for path in policy.readable:
            args += ["--ro-bind-try", path, path]
        for path in policy.read_roots:
            args += ["--ro-bind-try", path, path]
        for path in policy.writable:
            args += ["--bind-try", path, path]
        for path in policy.workspace:
            args += ["--bind", path, path]
        args += protected_args(policy)
        args += temp_dir_args(tmpdir, policy)
        args += hide_last
        args += ["--chdir", cwd, "--", *argv]
        return [*launcher, *args], dict(env), cwd


def protected_args(policy: Policy) -> list[str]:
    """Read-only binds of the protected paths, after read-write binds of the directories
    that lead to them (each a mount point then, so it cannot be renamed), parents first.
    A path inside another protected one is covered by it; nothing is bound read-write
    inside a protected path."""
    binds = sorted(policy.write_binds, key=len, reverse=True)
    protected = sorted(set(policy.protected), key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in protected:
        if not any(within(path, other) for other in kept):
            kept.append(path)
    holders: set[str] = set()
    for path in kept:
        bind = next((b for b in binds if within(path, b) and path != b), None)
        if bind is None:
            continue
        parent = os.path.dirname(path)
        while parent != bind and within(parent, bind):
            holders.add(parent)
            parent = os.path.dirname(parent)
    holders = {h for h in holders if not any(within(h, p) for p in kept)}
    args: list[str] = []
    for path in sorted(holders | set(kept), key=lambda p: (p.count("/"), p)):
        args += ["--ro-bind-try" if path in kept else "--bind-try", path, path]
    return args


def hidden_args(policy: Policy) -> tuple[list[str], list[str]]:
    """``(before the binds, after them)``: an empty tmpfs over each hidden directory (made
    read-only once everything is mounted), ``/dev/null`` over each hidden file. A hidden
    directory holding a bind goes first, so the bind shows through; the others go last,
    so they cover what the binds showed. Paths in the sandbox's private directories are
    hidden already."""
    first: list[str] = []
    last: list[str] = []
    read_only: list[str] = []
    for path in sorted(set(policy.hidden), key=lambda p: (p.count("/"), p)):
        if path == "/" or policy.private(path):
            continue
        if os.path.isdir(path):
            mount = ["--tmpfs", path]
            read_only.append(path)
        elif os.path.isfile(path):
            mount = ["--ro-bind", "/dev/null", path]
        else:
            continue
        if any(within(bind, path) for bind in policy.binds):
            first += mount
        else:
            last += mount
    for path in read_only:
        last += ["--remount-ro", path]
    return first, last


def namespace_args(network: bool) -> list[str]:
    args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    if os.geteuid() == 0:
        # root keeps every capability inside by default, and CAP_SYS_ADMIN can remount / rw
        args += ["--cap-drop", "ALL"]
    return args


def resolver_dirs() -> list[str]:
    """Where ``/etc/resolv.conf`` really lives, when that is under the hidden ``/run``
    (systemd-resolved's stub file): shown read-only so names resolve with the network on."""
    target = os.path.realpath(RESOLV_CONF)
    if target != RESOLV_CONF and within(target, "/run"):
        return [os.path.dirname(target)]
    return []


def _programs_under_tmp(argv: Sequence[str]) -> tuple[str, ...]:
    """The directories of what the command runs that live under ``/tmp`` (the program's own
    directory, and this interpreter's environment, which a Python program of it needs):
    the private ``/tmp`` would otherwise hide them and the command would not start (rg
    installed in a virtual environment under ``/tmp`` answered "(no matches)")."""
    found: list[str] = []
    first = argv[0] if argv else ""
    if os.path.isabs(first):
        found.append(os.path.dirname(os.path.realpath(first)))
    found += [os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)]
    return tuple(p for p in dict.fromkeys(found) if within(p, "/tmp") and p != "/tmp")


def prepare_private_tmp(policy: Policy, tmpdir: str) -> None:
    """Create, in the private temp dir, the mount points of the binds under ``/tmp`` and
    ``$TMPDIR`` when it is under ``/tmp``. The directories that only hold a bind (a
    workspace in ``/tmp/x/ws`` needs ``/tmp/x``) become read-only (0555, and no capability
    inside overrides that), so that a command writing next to its workspace fails instead
    of writing to a copy the host never sees; ``$TMPDIR`` itself stays writable."""
    wanted = [(bind, os.path.isdir(bind)) for bind in policy.binds
              if within(bind, "/tmp") and bind != "/tmp"]
    if tmpdir and within(tmpdir, "/tmp") and tmpdir != "/tmp" and not any(
            within(tmpdir, root) for root in policy.write_binds):
        wanted.append((tmpdir, True))
    for path, is_dir in wanted:
        parts = os.path.relpath(path, "/tmp").split(os.sep)
        leaf = os.path.join(policy.tmp_dir, *parts)
        if os.path.lexists(leaf):
            continue  # prepared by an earlier command of this session
        holders = [os.path.join(policy.tmp_dir, *parts[:i]) for i in range(1, len(parts))]
        for holder in holders:
            if os.path.isdir(holder):
                os.chmod(holder, 0o700)
            else:
                os.mkdir(holder, 0o700)
        if is_dir:
            os.mkdir(leaf, 0o700)
        else:
            open(leaf, "ab").close()  # an empty mount point for a file
        for holder in reversed(holders):
            inside = os.path.join("/tmp", os.path.relpath(holder, policy.tmp_dir))
            if policy.holds_bind(inside) and inside != tmpdir:
                os.chmod(holder, 0o555)


def temp_dir_args(tmpdir: str, policy: Policy) -> list[str]:
    """Keep a ``$TMPDIR`` (absolute and clean, or empty) outside ``/tmp`` usable: unless
    commands may write there already, the private temp dir is shown there too."""
    if not tmpdir or within(tmpdir, "/tmp") or within(tmpdir, "/run"):
        return []
    if any(within(tmpdir, root) for root in policy.write_binds) or not os.path.isdir(tmpdir):
        return []
    return ["--bind", policy.tmp_dir, tmpdir]


def _run_probe(program: str, *, seccomp: bool = False) -> Probe:
    launcher: list[str] = []
    if seccomp:
        try:
            launcher = [*LAUNCHER, filter_path()]
        except SeccompUnavailable as exc:
            return Probe(False, f"cannot keep Unix sockets out of reach with the network "
                                f"off: {exc}")
    argv = [*launcher, program, *namespace_args(network=False),
            *(["--seccomp", "3"] if seccomp else []), "--ro-bind",
            "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"]
    try:
        done = process.prepare(None, argv, sandbox="off", purpose="sandbox probe").run(
            timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(False, f"running {program} failed: {exc}")
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        reason = said[-1] if said else f"exit code {done.returncode}"
        return Probe(False, f"{program} cannot create a sandbox here: {reason} (bubblewrap "
                            "needs unprivileged user namespaces, or root)")
    try:
        version = process.prepare(None, [program, "--version"], sandbox="off",
                                  purpose="sandbox probe").run(timeout=PROBE_TIMEOUT_S)
        detail = version.stdout.decode(errors="replace").strip() or "bubblewrap"
    except (OSError, subprocess.SubprocessError):
        detail = "bubblewrap"
    return Probe(True, f"{detail} at {program}")
