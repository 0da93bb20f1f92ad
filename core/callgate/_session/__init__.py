"""The session layer: `Session` (one conversation's state over the pipeline), the
planner/executor pair and how a session meets the store. Imports only lower layers.
"""
