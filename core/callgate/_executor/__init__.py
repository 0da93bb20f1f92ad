"""Remote executors: a session's judged calls run on a worker next to its workspace
(issue 37; the seam is `_pipeline.executor`, the protocol `_executor.protocol`)."""
