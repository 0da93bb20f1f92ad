"""The shell tools: ``bash`` and ``pwsh`` (one per host; both run `command`) and the job
tools (`job_tools`)."""
