"""The host layer: boot (plugin discovery, config, the surface) and what every session of
a host shares. Imports only lower layers.
"""
