"""``install_source``: install skills and MCP servers from a local source, in two phases.

``apply=false`` (the default) answers the plan (`_install_plan`) and changes
nothing. ``apply=true`` with the echoed ``planId`` recomputes the plan and carries
it out only if the ids match; a missing or changed id is refused and nothing
changes. Skills are copied into the scope's skills root (a temp folder renamed
into place, never over anything); MCP servers become ``[mcp_servers.<name>]``
tables appended to the workspace's ``callgate.toml`` with tomlkit (comments, order
and formatting survive). ``callgate.toml`` is a protected path no other tool may
write; this tool writes it only in an approved apply: a plan with a high-risk
action (every MCP server, a skill with code) always asks (`permission`), and its
apply is refused when no approver is there to ask (``ask_without_approver =
"allow"`` does not count as a human's yes). Nothing from the source runs and
nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
from typing import Any

from callgate import Decision, SessionKey, ToolContext, ToolError
from callgate.files import create_file, rename_noreplace, replace_file

from .._install_plan import McpAction, Plan, SkillAction, build_plan, read_config
from .._install_tree import source_error
from .install_skill import taken_names

#: the capability plugin's servers, when it is loaded (a key of the same name)
MCP_SERVERS: SessionKey[Any] = SessionKey("mcp_servers")

def is_read_only(args: Any) -> bool:
    return not (isinstance(args, dict) and args.get("apply"))


def _configured_servers(ctx_session: Any) -> set[str]:
    servers = ctx_session.find_extension(MCP_SERVERS)
    return set(servers.names()) if servers is not None else set()


def plan_for(ctx_session: Any, args: dict[str, Any], taken: set[str]) -> Plan:
    """The plan of one call's arguments (no changes)."""
    source = args.get("source")
    command = args.get("command")
    if source is None and command is None:
        raise source_error(
            "NO_SOURCE", "give a source (a folder, file or .zip) or an MCP server's command"
        )
    if source is not None and command is not None:
        raise source_error("BOTH", "give a source or a command, not both")
    kind = args.get("kind", "auto")
    if command is not None and kind == "skill":
        raise source_error("KIND", "a command is an MCP server, not a skill")
    resolved = display = None
    files = ctx_session.files
    if source is not None:
        resolved = ctx_session.workspace.resolve(source)
        display = resolved.display
        try:
            is_dir = stat.S_ISDIR(resolved.stat().st_mode)  # beneath its root, not followed
        except OSError:
            raise ToolError(
                "not_found",
                f"INSTALL_NOT_FOUND: {display} does not exist",
                "INSTALL_NOT_FOUND",
                {"executed": False},
            ) from None
        if not is_dir and files.denied(resolved):
            raise source_error("DENIED", f"{display} is on the read deny list")
    return build_plan(
        source=resolved,
        display=display or f"command {command}",
        kind=kind,
        scope=args.get("scope", "project"),
        name=args.get("name"),
        command=command,
        args=args.get("args"),
        env=args.get("env"),
        workspace_root=ctx_session.workspace.root,
        taken=taken,
        configured_servers=_configured_servers(ctx_session),
        denied=files.denied,
    )


def _shown(path: str, root: str) -> str:
    head = root.rstrip(os.sep) + os.sep
    return path[len(head) :] if path.startswith(head) else path


def render_plan(plan: Plan, root: str, status: str) -> dict[str, Any]:
    actions: list[dict[str, Any]] = []
    for s in plan.skills:
        actions.append(
            {
                "kind": "skill",
                "name": s.name,
                "scope": s.scope,
                "target": _shown(s.target, root) + "/",
                "files": sorted(s.files),
                "riskLevel": s.risk,
                "why": s.why,
                **({"blocked": s.blocked} if s.blocked else {}),
            }
        )
    for m in plan.servers:
        actions.append(
            {
                "kind": "mcp",
                "name": m.name,
                "configPath": _shown(plan.config_path, root),
                "entry": f"[mcp_servers.{m.name}]",
                "command": m.command,
                "args": list(m.args),
                "envNames": sorted(m.env),
                "riskLevel": m.risk,
                "why": m.why,
                **({"blocked": m.blocked} if m.blocked else {}),
            }
        )
    out: dict[str, Any] = {
        "ok": status != "blocked",
        "status": status,
        "planId": plan.plan_id,
        "source": plan.source,
        "actions": actions,
    }
    if plan.git_head:
        out["gitHead"] = plan.git_head
    if plan.skipped:
        out["skipped"] = list(plan.skipped[:50])
    return out


def _approver_present(session: Any) -> bool:
    caller = getattr(session.host.pm.hook, "callgate_ask_permission", None)
    return bool(caller is not None and caller.get_hookimpls())


def permission(session: Any, args: dict[str, Any]) -> Decision | None:
    """An apply with a high-risk action, or one that writes callgate.toml, always asks."""
    if not args.get("apply"):
        return None
    try:
        plan = plan_for(session, args, taken_names(session))
    except ToolError:
        return None  # the call itself will answer the error
    if args.get("planId") != plan.plan_id or plan.blocked:
        return None  # refused without bothering the user
    if not (plan.high_risk or plan.servers):
        return None
    what = "; ".join(f"{a.name}: {a.why}" for a in plan.actions if a.risk == "high")
    where = f" (writes {os.path.basename(plan.config_path)})" if plan.servers else ""
    return Decision(
        "ask", None, f"install_source would install high-risk items{where}: {what[:1500]}"
    )


# --- applying ----------------------------------------------------------------------------


def _install_skill(ctx: ToolContext, action: SkillAction) -> None:
    root = os.path.dirname(action.target)
    temp_name = f".install-{secrets.token_hex(6)}"
    temp = os.path.join(root, temp_name)
    inside = action.scope == "project"
    written: list[str] = []  # the session's records of the temp files (inside only)
    try:
        for rel, entry in sorted(action.files.items()):
            target = os.path.join(temp, *rel.split("/"))
            if inside:
                rp = ctx.workspace.resolve(os.path.relpath(target, ctx.workspace.root), write=True)
                ctx.files.create(rp, entry.data)
                written.append(rp.path)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                create_file(target, entry.data)
        if inside:
            rel_temp = os.path.relpath(temp, ctx.workspace.root)
            rel_target = os.path.relpath(action.target, ctx.workspace.root)
            rename_noreplace(
                ctx.workspace.resolve(rel_temp, write=True),
                ctx.workspace.resolve(rel_target, write=True),
            )
            for rel, entry in sorted(action.files.items()):  # this session's own writes
                installed = os.path.join(rel_target, *rel.split("/"))
                ctx.files.record(ctx.workspace.resolve(installed, write=True), entry.data)
        else:
            rename_noreplace(temp, action.target)
    except FileExistsError:
        raise source_error(
            "EXISTS",
            f"{action.target} was created meanwhile; it was left as it is",
            "already_exists",
        ) from None
    except OSError as exc:
        raise ToolError(
            "io_error", f"could not install {action.name}: {exc.strerror or exc}", "FS_IO_ERROR"
        ) from None
    finally:
        if os.path.isdir(temp):
            shutil.rmtree(temp, ignore_errors=True)
        for path in written:  # gone (renamed or removed): the session forgets them, so the
            ctx.files.record(path)  # outside-change watcher has nothing to report about them


def _toml_with(text: str | None, servers: tuple[McpAction, ...], source: str) -> str:
    import tomlkit

    doc = tomlkit.parse(text) if text is not None else tomlkit.document()
    table = doc.get("mcp_servers")
    if table is None:
        table = tomlkit.table(is_super_table=True)
        doc.add("mcp_servers", table)
    for server in servers:
        entry = tomlkit.table()
        entry.add(tomlkit.comment(f"added by install_source from {source}"[:300]))
        entry.add("command", server.command)
        entry.add("args", list(server.args))
        if server.env:
            env = tomlkit.inline_table()
            env.update(server.env)
            entry.add("env", env)
        if server.cwd:
            entry.add("cwd", server.cwd)
        table.add(server.name, entry)
    return tomlkit.dumps(doc)


def _write_config(plan: Plan) -> None:
    import hashlib

    path = plan.config_path
    if os.path.islink(path):
        raise source_error(
            "CONFIG_LINK",
            f"{path} is a symlink; install_source writes only a regular callgate.toml",
        )
    before = read_config(path)  # never through a symlink
    digest = hashlib.sha256(before).hexdigest() if before is not None else None
    if digest != plan.config_digest:
        raise source_error("PLAN_CHANGED", "callgate.toml changed since the plan; plan again")
    data = _toml_with(
        before.decode("utf-8") if before is not None else None, plan.servers, plan.source
    ).encode("utf-8")

    def unchanged() -> None:
        now = read_config(path)
        if now is None or hashlib.sha256(now).hexdigest() != digest:
            raise source_error("PLAN_CHANGED", "callgate.toml changed while installing")

    try:
        if before is None:
            create_file(path, data)
        else:
            replace_file(path, data, before_publish=unchanged)
    except FileExistsError:
        raise source_error("PLAN_CHANGED", "callgate.toml was created meanwhile") from None
    except OSError as exc:
        raise ToolError(
            "io_error", f"could not write {path}: {exc.strerror or exc}", "FS_IO_ERROR"
        ) from None


def run_install_source(ctx: ToolContext, args: dict[str, Any]) -> str:
    root = ctx.workspace.root
    plan = plan_for(ctx.session, args, taken_names(ctx.session))
    if not args.get("apply"):
        status = "blocked" if plan.blocked else "planned"
        out = render_plan(plan, root, status)
        out["next"] = (
            ("nothing can be applied: " + "; ".join(plan.blocked))
            if plan.blocked
            else (
                f'apply with install_source(..., apply=true, planId="{plan.plan_id}") and '
                "the same other arguments"
                + (" (the user is asked first)" if plan.high_risk else "")
            )
        )
        return json.dumps(out, ensure_ascii=False)
    wanted = args.get("planId")
    if not wanted:
        raise source_error(
            "PLAN_REQUIRED",
            "apply needs the planId of a plan: call without apply first; nothing was changed",
        )
    if wanted != plan.plan_id:
        raise source_error(
            "PLAN_CHANGED",
            f"planId {wanted} is not the plan of these "
            f"arguments now (the source, a target or callgate.toml changed, or "
            f"the arguments differ); the current plan is {plan.plan_id}: review "
            "it and apply that; nothing was changed",
        )
    if plan.blocked:
        raise source_error("BLOCKED", "; ".join(plan.blocked) + "; nothing was changed")
    if (plan.high_risk or plan.servers) and not _approver_present(ctx.session):
        raise source_error(
            "NEEDS_APPROVAL",
            "this plan has high-risk actions and writes need "
            "a human's approval, but no approver is connected; nothing was "
            "changed",
            "blocked",
        )
    done: list[str] = []
    try:
        for action in plan.skills:
            _install_skill(ctx, action)
            done.append(action.name)
        if plan.servers:
            _write_config(plan)
            done += [s.name for s in plan.servers]
    except ToolError as exc:
        if not done:
            raise
        out = render_plan(plan, root, "partial")
        out.update(ok=False, installed=done, error=exc.message)
        return json.dumps(out, ensure_ascii=False)
    out = render_plan(plan, root, "done")
    out["installed"] = done
    if plan.servers:
        out["note"] = (
            "the MCP servers are configured for the next session (callgate.toml is read at boot)"
        )
    return json.dumps(out, ensure_ascii=False)
