"""The memory plugin's tools: ``remember``, ``forget`` and ``memory`` (`memory`)."""
