"""``callgate sessions``: list, show, search, export and prune the session store.

The store is found as a host finds it (``[sessions] store`` in ``--config``, or in the
``callgate.toml`` / ``pyproject.toml`` of ``--workspace``, else the default location);
``--store`` names it directly. Nothing here boots plugins: the commands read the store.

``export`` writes the replay transcript format (host.md §9): one line per batch, in
order, with each call as the model sent it (decoded arguments) and the turn's origin,
so ``callgate replay`` of the export runs the same calls again.

What the store holds came from tools and the model: ``list``, ``show`` and ``search``
print it with every control character escaped (``\x1b``, ``\x07``, ``\x9b``, bidi
overrides as ``\u202e``), so a recorded escape sequence (an OSC 52 clipboard write, a
title change, a screen clear) is shown, never acted on by the terminal; newlines and tabs
of a recorded text are kept where a line keeps them. ``--json`` escapes them as JSON
does (``\u001b``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

from callgate.host import ConfigError, sessions_settings
from callgate.store import SEARCH_KINDS, StoreError, open_store

from ._render import arguments_text

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PREVIEW = 80
#: what a terminal would act on: C0 controls but newline and tab, DEL, C1 controls, and the
#: bidirectional overrides and isolates that reorder what is shown
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: the same outside JSON's own escapes (json.dumps escapes C0 already, not DEL, C1, bidi)
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character a terminal would act on written as an escape
    (``\x1b``, ``\u202e``); newlines and tabs are kept."""
    return _CONTROLS.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _say(text: str) -> None:
    """Print a line of store content for a terminal (`printable`)."""
    print(printable(text))


def _json_line(value: Any) -> str:
    """``value`` as one JSON line with nothing a terminal acts on left raw."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _store(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    table, location = sessions_settings(
        getattr(args, "config", None), getattr(args, "workspace", None)
    )
    return open_store(args.store or location), table


def _fail(message: str) -> int:
    print(f"callgate: {message}", file=sys.stderr)
    return EXIT_USAGE


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _short(text: str | None, limit: int = PREVIEW) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _run(command: Any, args: argparse.Namespace) -> int:
    try:
        return int(command(args))
    except (StoreError, ConfigError) as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        return EXIT_OK


# --- list ------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    infos = store.sessions(workspace=args.in_workspace, limit=args.limit, children=args.children)
    if args.json:
        for info in infos:
            print(_json_line(_info_json(info)))
        return EXIT_OK
    if not infos:
        _say(f"no sessions in {store.location}")
        return EXIT_OK
    print(f"{'ID':<32}  {'STARTED':<19}  {'STATUS':<11}  {'CALLS':>5}  WORKSPACE / PREVIEW")
    for info in infos:
        _say(
            f"{info.id:<32}  {_when(info.started):<19}  {info.status:<11}  {info.calls:>5}  "
            f"{info.workspace}"
        )
        extra = (f"[{info.name}] " if info.name else "") + _short(info.preview)
        if extra:
            _say(f"{'':<75}{extra}")
    return EXIT_OK


def _info_json(info: Any) -> dict[str, Any]:
    import attrs

    return attrs.asdict(info)


# --- show ------------------------------------------------------------------------------------


def _found(store: Any, key: str) -> Any:
    info = store.session(key)
    if info is None:
        raise StoreError(
            f"session store {store.location} holds no session {key!r} "
            "(callgate sessions list shows them)",
            store.location,
        )
    return info


def cmd_show(args: argparse.Namespace) -> int:
    import attrs

    store, _ = _store(args)
    info = _found(store, args.id)
    entries = store.entries(info.id)
    facts = store.facts(info.id)
    if args.json:
        print(_json_line({"session": _info_json(info)}))
        for entry in entries:
            print(_json_line({"kind": entry.kind, **attrs.asdict(entry)}))
        for fact in facts:
            print(_json_line({"kind": "fact", **attrs.asdict(fact)}))
        return EXIT_OK
    _say(f"session {info.id}" + (f" ({info.name})" if info.name else "") + f": {info.status}")
    _say(f"  workspace {info.workspace}")
    if info.principal:
        _say(f"  principal {info.principal}")
    _say(
        f"  started {_when(info.started)}, ended {_when(info.ended)}; {info.calls} calls; "
        f"record {info.record}; surface {info.surface or '-'}; os {info.os or '-'}"
    )
    if info.parent:
        _say(f"  child of {info.parent}")
    for child in store.children(info.id):
        _say(f"  child session {child.id} ({child.calls} calls)")
    for entry in entries:
        _say(_entry_line(entry))
    if facts:
        _say("execution facts (the writer and destructive calls that ran):")
        for fact in facts:
            _say(_fact_line(fact))
    return EXIT_OK


def _fact_line(fact: Any) -> str:
    """One execution fact: the call, the paths its gate held, for how long, how it ended."""
    held = ", ".join(fact.paths) if fact.paths else "no paths"
    took = max(0.0, fact.ended - fact.started) * 1000
    who = [f"profile {fact.profile}"] if fact.profile else []
    who += [f"depth {fact.depth}"] if fact.depth else []
    who += ["destructive"] if fact.destructive else []
    extra = f" [{', '.join(who)}]" if who else ""
    return (
        f"  call {fact.call_id} {fact.tool} → {fact.outcome}: held {held} from "
        f"{_when(fact.started)} for {took:.0f} ms{extra}"
    )


def _entry_line(entry: Any) -> str:
    from callgate.store import CallRecord, MessageRecord, NoticeRecord

    if isinstance(entry, MessageRecord):
        return f"#{entry.seq} {entry.role}: {_short(entry.text, 200)}"
    if isinstance(entry, NoticeRecord):
        return f"#{entry.seq} notice: {_short(entry.text, 200)}"
    assert isinstance(entry, CallRecord)
    took = f", {entry.duration_ms:.0f} ms" if entry.duration_ms is not None else ""
    judged = f" [{entry.permission} by {entry.decided_by}]" if entry.permission else ""
    tool = f" → {entry.tool}" if entry.tool else ""
    head = (
        f"#{entry.seq} call {entry.call_id} {entry.name}{tool} "
        f"{_short(arguments_text(entry.arguments), 120)} → {entry.outcome}{took}{judged}"
    )
    return head + "\n      " + _short(entry.seen, 200)


# --- search ----------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    kinds = args.kind or ["user_text", "assistant_text", "tool_input", "tool_error"]
    hits = store.search(
        args.query,
        workspaces=[args.in_workspace] if args.in_workspace else None,
        kinds=kinds,
        tool=args.tool,
        limit=args.limit,
    )
    if args.json:
        import attrs

        for hit in hits:
            print(_json_line(attrs.asdict(hit)))
        return EXIT_OK
    if not hits:
        print("no matches")
        return EXIT_OK
    for hit in hits:
        tool = f" {hit.tool}" if hit.tool else ""
        _say(
            f"{hit.session} #{hit.seq} {hit.kind}{tool} (score {hit.score:.3f}, "
            f"{_when(hit.at)}, {hit.workspace})"
        )
        _say(f"    {hit.snippet}")
    return EXIT_OK


# --- export ----------------------------------------------------------------------------------


def transcript_lines(calls: Sequence[Any]) -> list[str]:
    """The replay transcript of recorded calls: one line per batch, in order."""
    lines: list[str] = []
    batch: list[Any] = []

    def flush() -> None:
        if not batch:
            return
        items = [{"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in batch]
        line: dict[str, Any] = items[0] if len(items) == 1 else {"batch": items}
        if batch[0].origin == "automatic":
            line = {**line, "origin": "automatic"}
        lines.append(json.dumps(line, ensure_ascii=False))
        batch.clear()

    for call in calls:
        if batch and call.batch != batch[0].batch:
            flush()
        batch.append(call)
    flush()
    return lines


def cmd_export(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    info = _found(store, args.id)
    text = "".join(line + "\n" for line in transcript_lines(store.calls(info.id)))
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "x", encoding="utf-8") as fh:
                fh.write(text)
        except FileExistsError:
            return _fail(f"{args.output} exists; export writes a new file (nothing written)")
        except OSError as exc:
            return _fail(f"cannot write {args.output}: {exc.strerror or exc}")
        print(
            f"wrote {args.output} ({text.count(chr(10))} lines) from session {info.id}",
            file=sys.stderr,
        )
    return EXIT_OK


# --- prune -----------------------------------------------------------------------------------


def cmd_prune(args: argparse.Namespace) -> int:
    store, table = _store(args)
    keep_days = args.keep_days if args.keep_days is not None else table["keep_days"]
    max_mb = args.max_mb if args.max_mb is not None else table["max_store_mb"]
    report = store.prune(
        keep_days=keep_days or None, max_bytes=max_mb * 1024 * 1024 if max_mb else None
    )
    print(
        f"pruned {report.sessions} sessions from {store.location}: "
        f"{report.bytes_before / 1048576:.1f} MB → {report.bytes_after / 1048576:.1f} MB "
        f"(keep_days {keep_days or 'unlimited'}, max_store_mb {max_mb or 'unlimited'})"
    )
    return EXIT_OK


# --- the parser ------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sessions",
        help="list, show, search, export or prune the session store",
        description="Read and maintain the session store: every "
        "session a host recorded (docs/sessions.md).",
    )
    sub = p.add_subparsers(dest="sessions_command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument(
            "--store",
            help="the store (a path or URL); default: [sessions] store, "
            "else the user state directory's",
        )
        q.add_argument("--config", help="a callgate.toml whose [sessions] table to use")
        q.add_argument("--workspace", help="find callgate.toml / pyproject.toml here")

    q = sub.add_parser("list", help="sessions, newest first")
    common(q)
    q.add_argument("--json", action="store_true", help="one JSON object per session")
    q.add_argument("--in-workspace", help="only sessions of this workspace directory")
    q.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    q.add_argument("--children", action="store_true", help="include subagent sessions")
    q.set_defaults(func=lambda a: _run(cmd_list, a))

    q = sub.add_parser(
        "show",
        help="one session's timeline: messages, calls, notices, and the execution facts "
        "of the calls that ran",
    )
    common(q)
    q.add_argument("id", help="a session id, name, or unique id prefix (8+ characters)")
    q.add_argument("--json", action="store_true", help="the records as JSON lines")
    q.set_defaults(func=lambda a: _run(cmd_show, a))

    q = sub.add_parser("search", help="ranked full-text search over every session")
    common(q)
    q.add_argument("query")
    q.add_argument("--in-workspace", help="only sessions of this workspace directory")
    q.add_argument(
        "--kind",
        action="append",
        choices=SEARCH_KINDS,
        help="what to search (repeatable; default: all but tool_output)",
    )
    q.add_argument("--tool", help="only calls of this tool")
    q.add_argument("--limit", type=int, default=20)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=lambda a: _run(cmd_search, a))

    q = sub.add_parser("export", help="a session's calls as a replay transcript")
    common(q)
    q.add_argument("id")
    q.add_argument("-o", "--output", help="write to this new file (default: stdout)")
    q.set_defaults(func=lambda a: _run(cmd_export, a))

    q = sub.add_parser("prune", help="delete old sessions ([sessions] keep_days, max_store_mb)")
    common(q)
    q.add_argument("--keep-days", type=int, help="override [sessions] keep_days (0: no limit)")
    q.add_argument("--max-mb", type=int, help="override [sessions] max_store_mb (0: no limit)")
    q.set_defaults(func=lambda a: _run(cmd_prune, a))
