"""Fault injection for tests, as a plugin *module* (``plugins=[tests.faults]``).

A test that patches callgate in its own process reaches only a local session's tools: a
remote session's tools run in its worker, another process (``pytest --executor=bwrap-worker``,
docs/executors.md). A worker boots the host's plugin modules by name and takes the host's
config as its user config, so a fault declared here, and configured in the host's config,
is put in place in whichever process runs the session's tools: this one, or the worker.

Never shipped: the module lives under tests/, and a worker imports only the modules its
host loaded (a host's ``plugins=`` argument: integrator code; no config key names a module).
The table is user-only: a workspace's ``[test_faults]`` is ignored (tested in
tests/core/test_executor_faults.py). A fault is in place from a session's start to its end.

``[test_faults]``:

- ``sys_executable``: set ``sys.executable`` at boot, before the other plugins register
  (the search plugin looks for the ``rg`` beside the interpreter);
- ``rewrite_before_temp``: bytes (as text) written in place at the start of the target file
  just before a writer's temp file is written (a same-size change only the content check
  sees);
- ``barrier`` and ``barrier_name``: before a create's no-replace link, leave a file named
  ``barrier_name`` in the directory ``barrier`` and wait (≤ 20 s) until it holds two
  (two sessions meet there, so both have passed their gate).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from callgate import hookimpl

TABLE = "test_faults"
_USER = {"x-workspace": "user", "x-kind": "program"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "x-workspace": "user",
    "properties": {
        "sys_executable": {"type": "string", "default": "", **_USER},
        "rewrite_before_temp": {"type": "string", "default": "", **_USER},
        "barrier": {"type": "string", "default": "", **_USER},
        "barrier_name": {"type": "string", "default": "", **_USER},
    },
}

_lock = threading.Lock()
#: (module, name) -> the unpatched function and the (session id, wrapper factory) pairs
#: applied over it, in order: a session's end re-composes what the others still apply, so
#: two sessions of one process ending in any order leave no fault behind
_patches: dict[tuple[Any, str], tuple[Any, list[tuple[str, Any]]]] = {}


@hookimpl(tryfirst=True)
def callgate_register_tools(registry: Any) -> None:
    table = registry.add_config(TABLE, SCHEMA)
    if table["sys_executable"]:
        sys.executable = table["sys_executable"]


def _compose(module: Any, name: str) -> None:
    base, layers = _patches[(module, name)]
    function = base
    for _, factory in layers:
        function = factory(function)
    setattr(module, name, function)
    if not layers:
        del _patches[(module, name)]


def _patch(session: Any, module: Any, name: str, replacement: Any) -> None:
    _patches.setdefault((module, name), (getattr(module, name), []))[1].append(
        (session.id, replacement)
    )
    _compose(module, name)


@hookimpl
def callgate_session_start(session: Any) -> None:
    import callgate._fs.atomic as atomic

    table = session.host.config(TABLE)
    with _lock:
        if table["rewrite_before_temp"]:
            data = table["rewrite_before_temp"].encode()

            def rewrite(original: Any) -> Any:
                def write_temp(directory: Any, name: str, payload: Any, mode: Any) -> Any:
                    with open(directory.join(name), "r+b") as fh:
                        fh.write(data)
                    return original(directory, name, payload, mode)

                return write_temp

            _patch(session, atomic, "write_temp", rewrite)
        if table["barrier"]:
            barrier, me = table["barrier"], table["barrier_name"] or str(os.getpid())

            def meet(original: Any) -> Any:
                def link_noreplace(directory: Any, tmp: str, name: str) -> Any:
                    open(os.path.join(barrier, me), "w").close()
                    deadline = time.monotonic() + 20
                    while len(os.listdir(barrier)) < 2 and time.monotonic() < deadline:
                        time.sleep(0.01)
                    return original(directory, tmp, name)

                return link_noreplace

            _patch(session, atomic, "link_noreplace", meet)


@hookimpl
def callgate_session_end(session: Any) -> None:
    with _lock:
        for key, (_, layers) in list(_patches.items()):
            if any(sid == session.id for sid, _ in layers):
                layers[:] = [(sid, f) for sid, f in layers if sid != session.id]
                _compose(*key)
