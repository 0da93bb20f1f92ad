"""The config layer: loading the config files, their layers (user, explicit,
workspace) and the per-table validation, and where state lives. Imports only lower layers.
"""
