"""callgate-sandbox: every shell command confined, by a backend chosen at boot.

The shell plugin launches each foreground command and background job through
its ``callgate_wrap_command`` hook; this plugin answers it. With the Linux
backend (bubblewrap) a command sees the whole filesystem read-only except the
workspace (its protected paths, such as ``callgate.toml`` and ``.git/hooks``,
stay read-only) and a private ``/tmp``, a minimal ``/proc`` and ``/dev``, and
the network unless ``network = false`` (then no socket reaches anything
outside, Unix sockets included). Killing the command's process group ends the
confined tree.

Config (``callgate.toml``; every key optional)::

    [sandbox]
    enabled = "auto"         # default: on where a backend works; true: required; false: off
    backend = "auto"         # "auto" | "bwrap" | "none" | a plugin's backend
    network = true           # false: no network, no Unix sockets
    writable = ["/home/me/.cache/pip"]   # absolute, existing; never "/"
    readable = ["/run/user/1000/keyring"] # shown read-only where the sandbox hides paths

``enabled = true`` with no working backend fails boot; ``"auto"`` then runs
commands unconfined after a one-line boot notice; ``callgate plugins`` shows
the active backend. A command that failed because the sandbox refused
something gets one ``[note: ...]`` line naming the key that would allow it.

Other packages add backends by returning `Backend` instances from the
``callgate_sandbox_backends`` hook (`hookspecs`). The entry point is this
module (``sandbox = "callgate_sandbox"``).
"""

from ._backend import Backend, Policy, Probe
from ._bwrap import BwrapBackend
from ._config import CONFIG_SCHEMA, SandboxConfig
from ._hints import refusal_hint
from ._plugin import (
    ActiveSandbox,
    SessionSandbox,
    callgate_register_tools,
    callgate_session_end,
    callgate_wrap_command,
)

__all__ = [
    "CONFIG_SCHEMA",
    "ActiveSandbox",
    "Backend",
    "BwrapBackend",
    "Policy",
    "Probe",
    "SandboxConfig",
    "SessionSandbox",
    "callgate_register_tools",
    "callgate_session_end",
    "callgate_wrap_command",
    "refusal_hint",
]
