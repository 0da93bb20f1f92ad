"""The goals plugin's tools: ``create_goal``, ``get_goal`` and ``update_goal`` (`goals`)."""
