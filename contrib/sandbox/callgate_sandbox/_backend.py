"""What a sandbox backend is: a probe that says whether it works on this machine, and a
wrapper that turns one command's launch into a confined one under a `Policy`.

The policy is the same for every backend; what a backend cannot enforce it must
refuse in `Backend.probe` (the host then fails boot) rather than run unconfined.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping, Sequence

import attrs


def within(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it, at a component boundary (both absolute, clean)."""
    if path == root or root == "/":
        return True
    return path.startswith(root.rstrip("/") + "/")


@attrs.frozen
class Probe:
    """Whether a backend works here: ``detail`` is its version when ``ok``, else why not."""

    ok: bool
    detail: str


@attrs.frozen
class Policy:
    """What one session's commands may touch.

    Paths are absolute and canonical. ``workspace`` (the session's write roots)
    and ``writable`` are read-write, except the ``protected`` paths in them (the
    host's config files, ``.git/hooks``, ...), which are read-only and cannot be
    renamed away; without ``network`` no socket reaches anything outside the
    sandbox, filesystem Unix sockets included. ``read_roots`` and ``readable`` are
    read-only even where the backend hides the host's files; everything else
    is the host's filesystem, read-only, except ``private_dirs``: each is a
    fresh place of the sandbox's own (``/tmp`` is the session's ``tmp_dir``),
    writable except for the directories that hold a bind (`holds_bind`).
    ``read_only`` marks the policy of a strict read-only session: its workspace is among
    the ``read_roots`` and nothing of the host is writable (`read_only_policy`).
    """

    workspace: tuple[str, ...]
    read_roots: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    network: bool = False
    tmp_dir: str = ""
    private_dirs: tuple[str, ...] = ("/tmp",)
    #: protected paths in the workspace (``callgate.process.protected_paths``): shown read-only
    protected: tuple[str, ...] = ()
    read_only: bool = False
    #: paths not shown at all (``callgate.process.hidden_paths``: the session store, the
    #: state and user config directories): a directory reads empty, a file empty; what a
    #: session must reach inside one (its workspace) is shown on top
    hidden: tuple[str, ...] = ()

    @property
    def write_binds(self) -> tuple[str, ...]:
        return (*self.workspace, *self.writable)

    @property
    def binds(self) -> tuple[str, ...]:
        """Every host path the sandbox shows as it is on the host."""
        return (*self.workspace, *self.writable, *self.read_roots, *self.readable)

    def is_protected(self, path: str) -> bool:
        """Whether ``path`` is (inside) a protected path, shown read-only."""
        return any(within(path, p) for p in self.protected)

    def writable_inside(self, path: str) -> bool:
        """Whether a command may write ``path`` (an absolute, clean path as it names it)."""
        if self.is_protected(path):
            return False
        if any(within(path, root) for root in self.write_binds):
            return True
        if not self.private(path) or any(within(path, b) for b in self.binds):
            return False
        return not self.holds_bind(os.path.dirname(path))

    def holds_bind(self, directory: str) -> bool:
        """Whether ``directory`` exists in a private dir only to hold a bind below it: such
        directories are read-only (except ``$TMPDIR``), so ``../x`` from the workspace is not
        silently written to the sandbox's own copy of its parent."""
        return (self.private(directory) and directory not in self.private_dirs
                and any(within(b, directory) and b != directory for b in self.binds))

    def private(self, path: str) -> bool:
        """Whether ``path`` lies in one of the sandbox's own directories (not the host's)."""
        return any(within(path, d) for d in self.private_dirs)


def read_only_policy(policy: Policy) -> Policy:
    """``policy`` for a strict read-only session: the workspace and the ``writable`` paths
    are shown read-only like the ``read_roots``; only the sandbox's own private dirs stay
    writable. A backend then confines the session's commands by construction, whatever its
    command classifier accepted."""
    return attrs.evolve(
        policy, workspace=(), writable=(),
        read_roots=tuple(dict.fromkeys((*policy.workspace, *policy.read_roots))),
        readable=tuple(dict.fromkeys((*policy.writable, *policy.readable))),
        protected=(), read_only=True)


class Backend(abc.ABC):
    """One way to confine a command. Subclass it and return instances from the
    ``callgate_sandbox_backends`` hook; ``name`` is what ``[sandbox] backend`` names."""

    name: str = ""
    #: Directories the backend replaces with its own (hidden from commands); used by the
    #: refusal hints to tell "hidden by the sandbox" from "does not exist".
    private_dirs: tuple[str, ...] = ("/tmp",)

    @abc.abstractmethod
    def probe(self) -> Probe:
        """Whether this backend can confine commands on this machine (called once at boot)."""

    @abc.abstractmethod
    def wrap(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, policy: Policy
             ) -> tuple[list[str], dict[str, str], str]:
        """The confined launch of ``argv`` (same environment and working directory inside).

        The returned process must end everything it started when it is killed,
        so that ending its process group ends the confined tree.
        """

    def describe(self, probe: Probe) -> str:
        """How ``callgate plugins`` names the active backend."""
        return f"{self.name} ({probe.detail})"

