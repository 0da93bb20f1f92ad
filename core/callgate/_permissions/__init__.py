"""The permissions layer: the ``[permissions]`` rule engine. Imports only lower layers."""
