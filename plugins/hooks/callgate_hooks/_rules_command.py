"""``callgate rules check | explain | lint``: permission rules you can test, from a shell.

Added to the ``callgate`` command through the ``callgate.commands`` entry point
(``callgate_hooks.plugin:register``). Each boots a
host as ``callgate replay`` would (``--config``, else the workspace's config over the user's),
opens a session that records nothing, and judges without running anything but the hooks the
pipeline would ask (a PreToolUse hook is how the pipeline decides).

Exit codes (every subcommand): ``0`` allow (lint: nothing found), ``1`` deny (lint: findings),
``2`` ask, ``3`` an error (a bad config, bad JSON, a usage error). ``--json`` prints one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

EXIT = {"allow": 0, "deny": 1, "ask": 2}
EXIT_ERROR = 3


def usage_error(parser: argparse.ArgumentParser) -> Any:
    """The parser's ``error``: usage on stderr and exit code 3 (an error), not argparse's 2
    (which means ask here)."""
    def error(message: str) -> NoReturn:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)

    return error


# --- booting --------------------------------------------------------------------------------


def _boot(args: argparse.Namespace) -> tuple[Any, str] | int:
    from callgate import Host
    from callgate.host import BootError

    workspace = os.path.abspath(args.workspace or os.getcwd())
    if not os.path.isdir(workspace):
        return _fail(f"workspace {workspace} is not a directory")
    try:
        host = Host.boot(args.config, workspace=workspace, surface="full")
    except BootError as exc:
        return _fail(str(exc))
    host.config("sessions")["record"] = "off"  # a check is not a session worth keeping
    return host, workspace


def _fail(message: str) -> int:
    print(f"callgate: {message}", file=sys.stderr)
    return EXIT_ERROR


def _run(host: Any, workspace: str, work: Any) -> Any:
    import anyio

    async def main() -> Any:
        async with host.open_session(workspace) as session:
            return await work(session)

    return anyio.run(main)


def _stages(explanation: Any) -> list[dict[str, Any]]:
    return [{"stage": s.stage, "verdict": s.verdict, "detail": s.detail, "by": s.by,
             "answers": [{"who": who, "said": what} for who, what in s.answers]}
            for s in explanation.stages]


# --- check ----------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    words = list(args.line)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        return _fail("give the command line after --: callgate rules check -- git push")
    line = words[0] if len(words) == 1 else " ".join(words)
    booted = _boot(args)
    if isinstance(booted, int):
        return booted
    host, workspace = booted
    from callgate import ToolCall
    from callgate import rules as cg_rules

    shell = cg_rules.shell_tool(host)
    if shell is None:
        return _fail("no shell tool is loaded here (callgate-shell), so no command line is run")

    async def work(session: Any) -> dict[str, Any]:
        call = ToolCall("rules-check", shell.name, {"command": line})
        explanation = await cg_rules.explain(session, call)
        commands = _command_verdicts(session, ToolCall("rules-check", shell.name,
                                                       explanation.arguments
                                                       if isinstance(explanation.arguments,
                                                                     dict) else call.arguments),
                                     shell)
        return {"command": line, "tool": shell.name, "decision": explanation.decision,
                "decided_by": explanation.decided_by, "message": explanation.message,
                "commands": commands, "stages": _stages(explanation)}

    report = _run(host, workspace, work)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(f"{report['decision']}: {line}")
        print(f"  decided by {report['decided_by'] or 'nothing (the fallback)'}")
        if report["message"]:
            print(f"  {report['message']}")
        else:
            permission = next((s for s in report["stages"] if s["stage"] == "permission"
                               and s["detail"]), None)
            if permission is not None and report["decision"] != "allow":
                print(f"  {permission['detail']}")
        for item in report["commands"]:
            what = "writes " + item["command"] if item["role"] == "write" else item["command"]
            by = item["rule"] or f"no rule: the fallback ({item['fallback']})"
            print(f"  {item['decision']:<6} {what}  <- {by}")
    return EXIT[report["decision"]]


def _command_verdicts(session: Any, call: Any, shell: Any) -> list[dict[str, Any]]:
    """Every command of the line (and every file it writes) with the rule that speaks for it:
    callgate's own rules and the imported ones, deny over ask over allow."""
    from callgate import rules as cg_rules

    own = cg_rules.unit_verdicts(session, call, shell)
    imported: list[Any] = []
    runner = _hook_runner(session)
    if runner is not None:
        imported = runner.rules.unit_verdicts(call, shell, session)
    fallback, _why = session.fallback_for(session.host.permissions.mode)
    rank = {"deny": 2, "ask": 1, "allow": 0}
    out = []
    for index, unit in enumerate(own):
        candidates = [(unit, "permissions")]
        if index < len(imported):
            candidates.append((imported[index], "imported"))
        speaking = [(u, src) for u, src in candidates if u.action is not None]
        if not speaking:
            out.append({"command": unit.label, "role": unit.role, "decision": fallback,
                        "rule": None, "source": None, "fallback": fallback,
                        "reason": unit.undecidable})
            continue
        chosen, src = max(speaking, key=lambda pair: rank[pair[0].action])
        rule = chosen.rule
        if src == "imported" and runner is not None:
            origin = runner.rules.origin_of(chosen.action, chosen.rule)
            if origin is not None:
                rule = f"{chosen.rule} ({origin})"
        out.append({"command": unit.label, "role": unit.role, "decision": chosen.action,
                    "rule": f"{chosen.action}:{rule}", "source": src, "fallback": fallback,
                    "reason": chosen.reason or unit.undecidable})
    return out


def _hook_runner(session: Any) -> Any:
    from .plugin import EXTENSION, host_hooks

    if host_hooks(session.host) is None:
        return None
    return session.extension(EXTENSION)


# --- explain --------------------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments)
    except ValueError as exc:
        return _fail(f"the arguments are not JSON: {exc}")
    if not isinstance(arguments, dict):
        return _fail("the arguments must be a JSON object")
    booted = _boot(args)
    if isinstance(booted, int):
        return booted
    host, workspace = booted
    from callgate import ToolCall
    from callgate import rules as cg_rules

    from . import _names as names

    async def work(session: Any) -> Any:
        tool, given = args.tool, arguments
        if session.tool(tool) is None:  # Claude Code's name: callgate's tool and keys
            for candidate in names.callgate_names(tool):
                if session.tool(candidate) is not None:
                    given = names.from_claude(candidate, arguments, {},
                                              session.workspace.root)
                    tool = candidate
                    break
        return tool, await cg_rules.explain(session, ToolCall("rules-explain", tool, given))

    tool, explanation = _run(host, workspace, work)
    report = {"tool": tool, "arguments": explanation.arguments,
              "decision": explanation.decision, "decided_by": explanation.decided_by,
              "message": explanation.message, "stages": _stages(explanation)}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(f"{explanation.decision}: {tool} {json.dumps(explanation.arguments)}")
        for stage in explanation.stages:
            by = f" [{stage.by}]" if stage.by else ""
            detail = f": {stage.detail}" if stage.detail else ""
            print(f"  {stage.stage:<13} {stage.verdict}{by}{detail}")
            for who, what in stage.answers:
                print(f"      {who}: {what}")
    return EXIT[explanation.decision]


# --- lint -----------------------------------------------------------------------------------


def cmd_lint(args: argparse.Namespace) -> int:
    booted = _boot(args)
    if isinstance(booted, int):
        return booted
    host, workspace = booted
    from ._lint import lint

    async def work(session: Any) -> list[dict[str, Any]]:
        return lint(session, _hook_runner(session))

    findings = _run(host, workspace, work)
    if args.json:
        print(json.dumps({"findings": findings}, indent=2, ensure_ascii=False))
    else:
        for item in findings:
            where = f"{item['where']}: " if item.get("where") else ""
            print(f"{item['kind']}: {where}{item['rule']}: {item['message']}")
        if not findings:
            print("no findings")
    return 1 if findings else 0


__all__ = ["EXIT", "EXIT_ERROR", "cmd_check", "cmd_explain", "cmd_lint", "usage_error"]
