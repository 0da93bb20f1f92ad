"""Types two plugins exchange live once, in the library (issue 31): a subagent skill's child
and a ``task`` child end as the same `SubagentOutcome`, recorded in one book."""

from __future__ import annotations


def test_tasks_and_skills_speak_one_subagent_outcome() -> None:
    import callgate_skills.tools.run_skill as skills_run
    import callgate_tasks
    from callgate_toolkit.subagents import SubagentError, SubagentOutcome

    assert callgate_tasks.SubagentOutcome is SubagentOutcome
    assert callgate_tasks.SubagentError is SubagentError
    assert skills_run.SubagentOutcome is SubagentOutcome
    outcome = skills_run._outcome(callgate_tasks.SubagentOutcome(status="partial", answer="x"))
    assert outcome == SubagentOutcome(status="partial", answer="x") and outcome.is_retryable
