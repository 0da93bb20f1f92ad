"""Running one hook handler: a command (through the core's door, `callgate.process`) or an HTTP
POST, with the event's JSON as input, bounded by its timeout.

A **command** runs as ``bash -c COMMAND`` (``sh -c`` where there is no bash), in the workspace
root, with the event's JSON on stdin and ``CLAUDE_PROJECT_DIR`` set to the workspace root. It
goes through the door like every program a session starts: the environment is the host's
without anything that looks like a credential, ``PATH`` without workspace entries, and its
process group is killed when it outlives its timeout. Where it came from decides how it is
confined:

- a hook of the **user's own** config or settings files is the user's program: it runs outside
  the sandbox (``sandbox="off"``), as Claude Code runs it, so a hook that logs to
  ``~/.claude/`` keeps working;
- a hook of a **workspace's** settings files runs only for a workspace the user config trusts
  (the caller checks), and then still confined by the session's sandbox when one works
  (``sandbox="if_available"``, the workspace writable, no network).

An **http** hook is a POST of the same JSON to its URL (headers may name ``$VAR`` for the
variables ``allowedEnvVars`` lists); a 2xx answer's body is read as a command's stdout on
exit 0, anything else is a failed hook.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import TYPE_CHECKING, Any

import attrs
from callgate import process

from ._sources import USER, Handler

if TYPE_CHECKING:
    from callgate import SessionView

#: What a hook may print before the rest is cut (what the model could be shown is far less).
MAX_OUTPUT = 1 << 20
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@attrs.frozen
class Run:
    """One handler run: its exit code (or HTTP status), output, how long it took, and why it
    did not finish (``failure``: a timeout, a program that could not start)."""

    handler: Handler
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: float
    failure: str | None = None
    timed_out: bool = False


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data[:MAX_OUTPUT]
    return data[:MAX_OUTPUT].decode("utf-8", "replace")


def run_handler(handler: Handler, payload: dict[str, Any], session: SessionView) -> Run:
    """Run ``handler`` with ``payload`` as its input (blocking; call it in a worker thread)."""
    started = time.monotonic()
    if handler.type == "http":
        return _post(handler, payload, started)
    return _command(handler, payload, session, started)


def _command(handler: Handler, payload: dict[str, Any], session: SessionView,
             started: float) -> Run:
    root = session.workspace.root
    env = process.Environment(set={"CLAUDE_PROJECT_DIR": root})
    user = handler.level == USER
    assert handler.command is not None
    prepared = None
    for shell in ("bash", "sh"):
        try:
            prepared = process.prepare(
                session, [shell, "-c", handler.command], workspace="write", network=user,
                sandbox="off" if user else "if_available", env=env, cwd=root,
                purpose=f"{handler.event} hook")
            break
        except FileNotFoundError:
            continue
        except Exception as exc:  # the sandbox refused it
            return Run(handler, None, "", "", _ms(started), failure=f"not started: {exc}")
    if prepared is None:
        return Run(handler, None, "", "", _ms(started),
                   failure="not started: neither bash nor sh is on PATH")
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    try:
        done = prepared.run(input=data, timeout=handler.timeout)
    except subprocess.TimeoutExpired as exc:
        return Run(handler, None, _text(exc.stdout), _text(exc.stderr), _ms(started),
                   failure=f"timed out after {handler.timeout:g} s (its process group was "
                           "killed)", timed_out=True)
    except OSError as exc:
        return Run(handler, None, "", "", _ms(started),
                   failure=f"could not be started: {exc.strerror or exc}")
    return Run(handler, done.returncode, _text(done.stdout), _text(done.stderr), _ms(started))


def _post(handler: Handler, payload: dict[str, Any], started: float) -> Run:
    # here: urllib.request pulls http.client, ssl and email in; only HTTP hooks need them
    import urllib.error
    import urllib.request

    assert handler.url is not None
    allowed = set(handler.allowed_env)

    def expand(value: str) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            return os.environ.get(name, "") if name in allowed else ""
        return _VAR.sub(one, value)

    headers = {"Content-Type": "application/json",
               **{k: expand(v) for k, v in handler.headers.items()}}
    request = urllib.request.Request(handler.url, method="POST", headers=headers,
                                     data=json.dumps(payload).encode("utf-8"))
    try:
        with urllib.request.urlopen(request, timeout=handler.timeout) as response:
            body = response.read(MAX_OUTPUT)
            status = response.status
    except urllib.error.HTTPError as exc:
        body = exc.read(MAX_OUTPUT) if exc.fp is not None else b""
        return Run(handler, exc.code, "", _text(body), _ms(started),
                   failure=f"answered HTTP {exc.code}")
    except TimeoutError:
        return Run(handler, None, "", "", _ms(started),
                   failure=f"timed out after {handler.timeout:g} s", timed_out=True)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            return Run(handler, None, "", "", _ms(started),
                       failure=f"timed out after {handler.timeout:g} s", timed_out=True)
        return Run(handler, None, "", "", _ms(started), failure=f"request failed: {reason}")
    if not 200 <= status < 300:
        return Run(handler, status, "", _text(body), _ms(started),
                   failure=f"answered HTTP {status}")
    return Run(handler, 0, _text(body), "", _ms(started))


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)


__all__ = ["MAX_OUTPUT", "Run", "run_handler"]
