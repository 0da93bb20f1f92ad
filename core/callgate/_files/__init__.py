"""The files layer: the core's ``[files]`` policy (the read deny list, protected paths,
declared encodings, the edit limit), the host gate for structured mutations and the
observed-file API (``ctx.files``). Imports only lower layers.
"""
