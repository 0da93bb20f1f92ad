"""The hook the sandbox plugin offers to others: more backends.

A package that confines commands another way (a container runtime, macOS
``sandbox-exec``, Landlock) returns `Backend` instances; ``[sandbox] backend``
then names one of them, and ``"auto"`` tries them after the built-in ``bwrap``.
The spec is added while the sandbox plugin registers, after pluggy's
``check_pending()``; an implementation therefore marks itself optional::

    from callgate import hookimpl

    @hookimpl(optionalhook=True)
    def callgate_sandbox_backends():
        return [MyBackend()]
"""

from __future__ import annotations

from callgate import hookspec


@hookspec
def callgate_sandbox_backends():
    """Return a list of `callgate_sandbox.Backend` instances (or nothing).

    Called once at boot. A name already taken (``bwrap``, ``auto``, ``none``, or
    another plugin's backend) fails boot.
    """
