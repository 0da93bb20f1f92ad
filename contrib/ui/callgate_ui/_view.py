"""What the pages show, worked out from the store's records (no I/O, no HTML).

The store records each call's outcome, error signature, permission decision and who made it;
it does not record the pipeline's stages one by one (only OpenTelemetry spans carry those as
events). `stages` reads them back from what is recorded: a validation error kind stopped at
validation, a ``hook:`` block without a permission verdict at pre-tool-use, a deny at
permission (naming the rule), a file-gate error kind after an allow at the host gates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

#: Error kinds the argument check gives (host.md §7): the call stopped at validation.
VALIDATION_KINDS = frozenset({"unknown_tool", "invalid_arguments", "invalid_transcript"})
#: Error kinds of the host's file gates (observation, version, confinement).
GATE_KINDS = frozenset({"not_observed", "stale_version", "outside_workspace"})
STORM_MARK = "[convergence hint]"
#: Calls that change the goal or the todo list (the store keeps only the latest of each).
STATE_TOOLS = frozenset({"create_goal", "update_goal", "todo_write"})
#: Characters of a result shown inline; the complete stored result is one click away.
SHOWN_CHARS = 4000
_DIFF_HEAD = re.compile(r"^--- .*\n\+\+\+ .*$", re.MULTILINE)


@attrs.frozen
class Stage:
    """One pipeline stage of a call: ``passed``, ``stopped``, ``skipped`` (not reached) or
    ``unknown`` (the call is still running or was cut off)."""

    name: str
    state: str
    detail: str | None = None


def stages(call: Any) -> list[Stage]:
    """The stages ``call`` passed and where it stopped, from its recorded outcome, signature,
    permission and deciding rule."""
    names = ("validation", "pre-tool-use", "permission", "host gates", "tool")
    outcome, permission = call.outcome, call.permission
    if outcome in ("running", "interrupted") and permission is None:
        return [Stage(n, "unknown") for n in names]
    if outcome in VALIDATION_KINDS:
        return [Stage("validation", "stopped", outcome), *(Stage(n, "skipped") for n in names[1:])]
    signature = call.signature or ""
    if permission is None and outcome == "blocked" and signature.startswith("hook:"):
        return [
            Stage("validation", "passed"),
            Stage("pre-tool-use", "stopped", signature[5:]),
            *(Stage(n, "skipped") for n in names[2:]),
        ]
    out = [Stage("validation", "passed"), Stage("pre-tool-use", "passed")]
    if permission is None:  # answered before a verdict (a proxy's own action, a cancellation)
        return [*out, *(Stage(n, "unknown") for n in names[2:])]
    if permission.endswith("deny"):  # deny, ask:deny
        return [
            *out,
            Stage("permission", "stopped", call.decided_by),
            Stage("host gates", "skipped"),
            Stage("tool", "skipped"),
        ]
    out.append(Stage("permission", "passed", call.decided_by))
    if outcome in GATE_KINDS:
        return [*out, Stage("host gates", "stopped", outcome), Stage("tool", "skipped")]
    if outcome in ("running", "interrupted", "cancelled"):
        return [*out, Stage("host gates", "unknown"), Stage("tool", "unknown", outcome)]
    out.append(Stage("host gates", "passed"))
    return [
        *out,
        Stage(
            "tool", "failed" if call.is_error else "passed", None if outcome == "ok" else outcome
        ),
    ]


#: The pipeline stage a hook of each event acts at (callgate-hooks records them under the
#: session state namespace ``hooks``, keyed by the call's id).
HOOK_STAGES = {
    "PreToolUse": "pre-tool-use",
    "PreCompact": "pre-tool-use",
    "PermissionRequest": "permission",
    "PostToolUse": "tool",
    "PostToolUseFailure": "tool",
}
#: What a hook run's record says, in the order the page shows it.
HOOK_FIELDS = ("blocked", "decision", "reason", "error", "context", "feedback",
               "updated_input", "stop", "system_message")


def hook_runs(state: dict[tuple[str, str], Any], call: Any) -> dict[str, list[dict[str, Any]]]:
    """The hooks that ran for ``call`` (recorded by callgate-hooks), by the stage they acted
    at: each with its label, exit code, time, and what it said."""
    runs = state.get(("hooks", call.call_id))
    if not isinstance(runs, list):
        return {}
    start = (call.started or 0) - 1
    end = (call.ended if call.ended is not None else float("inf")) + 1
    out: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        if not isinstance(run, dict):
            continue
        at = run.get("at")
        if isinstance(at, int | float) and not start <= at <= end:
            continue  # another call with the same id
        stage = HOOK_STAGES.get(str(run.get("event")), "tool")
        said = [(k, run[k] if isinstance(run[k], str) else json.dumps(run[k]))
                for k in HOOK_FIELDS if k in run]
        out.setdefault(stage, []).append({
            "event": run.get("event"), "hook": run.get("hook"), "exit_code": run.get("exit_code"),
            "duration_ms": run.get("duration_ms"), "said": said,
            "failed": "error" in run, "blocked": "blocked" in run})
    return out


def refused(call: Any) -> bool:
    """Refused before it ran: invalid, blocked by a hook, denied, or stopped at a gate."""
    return any(s.state == "stopped" for s in stages(call))


def storm(text: str | None) -> bool:
    return bool(text) and STORM_MARK in text  # type: ignore[operator]


def diff_lines(text: str | None) -> list[tuple[str, str]] | None:
    """The unified diff in a result (an edit's), as ``(class, line)``; ``None`` without one."""
    if not text:
        return None
    found = _DIFF_HEAD.search(text)
    if found is None:
        return None
    out: list[tuple[str, str]] = []
    for line in text[found.start() :].split("\n"):
        if line.startswith(("--- ", "+++ ")):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        elif line.startswith((" ", "\\")) or line == "":
            cls = "ctx"
        else:
            break  # the diff ended (a note after it)
        out.append((cls, line))
    return out


def arguments_text(arguments: Any) -> str:
    """A call's arguments as the model sent them, pretty-printed when they are JSON."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(arguments)


def seen_note(call: Any) -> str | None:
    """How what the model saw differs from the complete stored result, if it does."""
    if call.shown is None or call.shown == call.text:
        return None
    if call.text is None:
        return "the complete text is no longer stored"
    return "notices appended" if call.shown.startswith(call.text) else "truncated"


def clip(text: str | None, limit: int = SHOWN_CHARS) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were left out."""
    text = text or ""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def duration(start: float | None, end: float | None) -> str:
    if start is None or end is None:
        return "—"
    return human_ms((end - start) * 1000)


def human_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    s = ms / 1000
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def sparkline(
    times: Sequence[float],
    start: float,
    end: float,
    *,
    width: int = 120,
    height: int = 24,
    buckets: int = 30,
) -> dict[str, Any]:
    """Calls over time as an SVG polyline's points (``points``) and the busiest bucket's
    count (``peak``); ``start``..``end`` spread over ``buckets`` buckets."""
    counts = [0] * buckets
    span = max(end - start, 1e-9)
    for t in times:
        i = int((t - start) / span * buckets)
        counts[min(max(i, 0), buckets - 1)] += 1
    peak = max(counts) if times else 0
    step = width / (buckets - 1)
    points = " ".join(
        f"{i * step:.1f},{height - 1 - (c / peak * (height - 2) if peak else 0):.1f}"
        for i, c in enumerate(counts)
    )
    return {"points": points, "peak": peak, "width": width, "height": height}


def nest_children(
    calls: Iterable[Any], children: Sequence[Any]
) -> tuple[dict[int, list[Any]], list[Any]]:
    """Children placed under the call that started them: the call (a ``task``-like call
    first, else any) whose run spans the child's start. The store links a child to its
    parent session only, not to the call, so this is read from times; the rest come back
    unplaced."""
    calls = list(calls)
    placed: dict[int, list[Any]] = {}
    rest: list[Any] = []
    for child in children:
        spanning = [
            c
            for c in calls
            if c.started <= child.started and (c.ended is None or child.started <= c.ended)
        ]
        spanning.sort(key=lambda c: (c.name not in ("task", "run_subagent"), -c.started))
        if spanning:
            placed.setdefault(spanning[0].seq, []).append(child)
        else:
            rest.append(child)
    return placed, rest


def snippet_parts(snippet: str) -> list[tuple[bool, str]]:
    """A search snippet split into ``(matched, text)`` parts (the store marks matches
    ``[like this]``)."""
    parts: list[tuple[bool, str]] = []
    pos = 0
    for m in re.finditer(r"\[([^\[\]\n]{1,200})\]", snippet):
        if m.start() > pos:
            parts.append((False, snippet[pos : m.start()]))
        parts.append((True, m.group(1)))
        pos = m.end()
    if pos < len(snippet):
        parts.append((False, snippet[pos:]))
    return parts
