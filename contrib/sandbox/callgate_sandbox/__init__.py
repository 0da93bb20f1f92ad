"""callgate-sandbox: every program a session starts confined, by a backend chosen at boot.

Every program a session starts goes through the core's door (`callgate.process`):
shell commands and background jobs, language servers, grep's ``rg``, review's
``git``, MCP servers an untrusted workspace config defines. The door asks the
``callgate_confine_process`` hook, which this plugin answers. With the Linux
backend (bubblewrap) a program sees the whole filesystem read-only except the
workspace (writable for shell commands, its protected paths, such as
``callgate.toml`` and ``.git/hooks``, read-only; read-only whole for the
programs that only read it: language servers, ``rg``, review's ``git``) and a
private ``/tmp``, a minimal ``/proc`` and ``/dev``, and the network unless
``network = false`` or the program does not ask for it (then no socket reaches
anything outside, Unix sockets included). Killing the program's process group
ends the confined tree (``--unshare-pid --die-with-parent``).

Config (``callgate.toml``; every key optional)::

    [sandbox]
    enabled = "auto"         # default: on where a backend works; true: required; false: off
    backend = "auto"         # "auto" | "bwrap" | "none" | a plugin's backend
    network = true           # false: no network, no Unix sockets
    writable = ["/home/me/.cache/pip"]   # absolute, existing; never "/"
    readable = ["/run/user/1000/keyring"] # shown read-only where the sandbox hides paths

``enabled = true`` with no working backend fails boot; ``"auto"`` then runs
programs unconfined after a one-line boot notice (and those that would run
workspace-controlled code are refused); ``callgate plugins`` shows
the active backend. A command that failed because the sandbox refused
something gets one ``[note: ...]`` line naming the key that would allow it.

Other packages add backends by returning `Backend` instances from the
``callgate_sandbox_backends`` hook (`hookspecs`). The entry point is this
module (``sandbox = "callgate_sandbox"``).
"""

from ._backend import Backend, Policy, Probe
from ._bwrap import BwrapBackend
from ._hints import refusal_hint
from .config import CONFIG_SCHEMA, SandboxConfig
from .plugin import (
    SANDBOX,
    ActiveSandbox,
    SessionSandbox,
    callgate_confine_process,
    callgate_register_tools,
    callgate_session_end,
)

__all__ = [
    "CONFIG_SCHEMA",
    "SANDBOX",
    "ActiveSandbox",
    "Backend",
    "BwrapBackend",
    "Policy",
    "Probe",
    "SandboxConfig",
    "SessionSandbox",
    "callgate_confine_process",
    "callgate_register_tools",
    "callgate_session_end",
    "refusal_hint",
]
