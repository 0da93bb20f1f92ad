"""Per-tool plans: the stages one tool's calls run in one session, worked out once (issue 38).

The enforcement order is `pipeline.STAGES`, and a session's is ``state.stages``. Much of
what each stage asks on every call is fixed for a given tool in a given session: the
tool a name resolves to and whether it is on the surface, whether a plugin implements
the hooks a stage calls, whether the tool's schema has a certainly-valid check, whether
the tool blocks. A plan asks once, when the session first calls the tool: each stage is
kept as it is, replaced by a version bound to what was found (`Specialiser`), or left out
where it would certainly do nothing for this tool (a hook stage no plugin implements).
The order of what is left is the session's, stage for stage.

A plan holds while what it was built on does: the session's tool table and surface are
fixed at open; the hooks are not (a plugin may register later), so the plans are dropped
whenever the plugin manager's generation moves. A name the session does not run
directly (unknown, off the surface) gets no plan: its calls run ``state.stages``, whose
`resolve` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._model.spec import ToolSpec
    from .state import SessionState

#: A stage (`pipeline.Stage`; ``Any`` here: this module sits below the pipeline's)
Stage = Callable[..., Any]
#: For one stage: the stage the calls of ``tool`` run in its place in ``state`` (itself,
#: a version bound to the tool, or ``None``: nothing to do for this tool).
Specialiser = Callable[["SessionState", "ToolSpec"], "Stage | None"]


def planned_stages(
    state: SessionState, name: str, specialise: Mapping[Stage, Specialiser]
) -> tuple[Stage, ...] | None:
    """The stages a call of ``name`` runs in ``state`` (built on its first call, then
    kept), or ``None`` when the session runs no tool of that name directly."""
    generation = state.host.hooks.generation
    plans = state.plans
    if state.plans_generation != generation:  # a plugin came or went: ask again
        plans.clear()
        state.plans_generation = generation
    stages = plans.get(name)
    if stages is None:
        tool = state.tools.get(name)
        if tool is None or (tool.visibility != "alias" and name not in state.visible):
            return None
        stages = plans[name] = _build(state, tool, specialise)
    return stages


def _build(
    state: SessionState, tool: ToolSpec, specialise: Mapping[Stage, Specialiser]
) -> tuple[Stage, ...]:
    out: list[Stage] = []
    for stage in state.stages:
        how = specialise.get(stage)
        bound = stage if how is None else how(state, tool)
        if bound is not None:
            out.append(bound)
    return tuple(out)


__all__ = ["Specialiser", "Stage", "planned_stages"]
