"""The tasks plugin's tools: ``task``, ``parallel_tasks`` and ``read_subagent_result``
(`task`); the built-in profiles ``explore``, ``research``, ``review``, ``security_review``
and ``read_only_task`` (`builtin`); ``fleet`` and ``fleet_output`` (`fleet`)."""
