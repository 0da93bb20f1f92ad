"""The workflow plugin's tools: ``todo_write``, ``present`` and ``compress``, one module each."""
