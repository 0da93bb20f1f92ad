"""The search plugin's tools: ``grep``, ``glob`` and ``ls``, one module each."""
