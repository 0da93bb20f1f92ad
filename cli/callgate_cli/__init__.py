"""The command line's parts: replay, the scripted subagents, the contract document, the
``callgate sessions`` commands. Top layer.
"""
