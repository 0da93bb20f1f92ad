"""The pipeline layer: what happens to one tool call (the stages, the batch scheduler,
the worker), what a call sees (`ToolContext`, the `SessionView`/`HostView` protocols),
the hook calls, profiles, and what outlives a call (family resources, the lifeline).
Imports only lower layers.
"""
