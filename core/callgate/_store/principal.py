"""Who a session belongs to: its principal.

Every session records the principal that opened it, and what the store gives back to a
session (its list of sessions, a session's timeline, history search, resuming) is only
that principal's. A principal is a short name:

- ``user:<login>``: the operating-system user running the host (the default: a CLI, a
  library integrator, ``callgate serve`` over stdio, ``serve --http`` without tokens);
- any other name an integrator passes to ``Host.open_session(principal=...)``, such as
  the ``token-<digest>`` of a bearer token under ``callgate serve --http``.

Sessions recorded before stores knew principals have none; they count as the local
user's (their store sits in that user's state directory), never as a token's.
"""

from __future__ import annotations

import os
import re

#: the prefix of an operating-system user's principal
LOCAL_PREFIX = "user:"
#: what a principal may look like: printable, no blanks, bounded
_VALID = re.compile(r"[\x21-\x7e]{1,200}")


_local: dict[int, str] = {}


def local_principal() -> str:
    """The principal of the operating-system user running this process (``user:<login>``;
    ``user:uid-<n>`` when the login cannot be found). Looked up once per user id."""
    uid = getattr(os, "geteuid", lambda: -1)()
    found = _local.get(uid)
    if found is None:
        found = _local[uid] = _lookup_local(uid)
    return found


def _lookup_local(uid: int) -> str:
    try:
        import pwd

        return LOCAL_PREFIX + pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError, AttributeError):
        pass
    try:
        import getpass

        return LOCAL_PREFIX + getpass.getuser()
    except (ImportError, KeyError, OSError):
        return f"{LOCAL_PREFIX}uid-{uid}"


def check_principal(principal: str) -> str:
    """``principal`` if it is a usable name (printable ASCII, no blanks, 1-200 characters),
    else `ValueError`."""
    if not isinstance(principal, str) or not _VALID.fullmatch(principal):
        raise ValueError(
            f"a principal is 1-200 printable ASCII characters without blanks, not {principal!r}"
        )
    return principal


def is_local(principal: str) -> bool:
    """Whether ``principal`` is an operating-system user's."""
    return principal.startswith(LOCAL_PREFIX)


def visible_to(recorded: str | None, principal: str) -> bool:
    """Whether a session recorded by ``recorded`` belongs to ``principal`` (a session
    recorded before principals, ``None``, belongs to the local users)."""
    if recorded is None:
        return is_local(principal)
    return recorded == principal


__all__ = ["LOCAL_PREFIX", "check_principal", "is_local", "local_principal", "visible_to"]
