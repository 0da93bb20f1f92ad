"""The host layer: boot (plugin discovery, config, the surface) and what every session of
a host shares; the installed provider renderings (`renderings`), the ``[sessions]`` table
read without a host (`settings`) and the far end of a remote executor (`worker`). Imports
only lower layers.
"""
