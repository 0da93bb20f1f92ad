"""The sessions plugin's tools: ``list_sessions``, ``read_session`` and ``history`` (`sessions`)."""
