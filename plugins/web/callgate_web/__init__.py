"""callgate-web: the ``web_fetch`` tool, with an address guard against SSRF.

Installed, it registers through the ``callgate`` entry point (``web =
"callgate_web"``) with the system resolver and a real transport. Config lives in
``[web]`` (timeouts, ``max_bytes``, ``max_redirects``, ``allow_loopback``,
``resolve``, ``ca_bundle``).

To inject a resolver and a transport (tests, sandboxes), register your own
instance instead of the entry point::

    from callgate_web import WebPlugin

    plugin = WebPlugin(resolver=lambda host: ["127.0.0.1"],
                       transport=lambda tls: MyTransport(verify=tls))
    host = Host.boot(config, plugins=[plugin], entrypoints=False)
"""

from ._guard import category, embedded
from .config import CONFIG_SCHEMA
from .plugin import WebPlugin, callgate_register_tools, default_plugin
from .tools.web_fetch import SCHEMA, __version__

__all__ = [
    "CONFIG_SCHEMA",
    "SCHEMA",
    "WebPlugin",
    "__version__",
    "callgate_register_tools",
    "category",
    "default_plugin",
    "embedded",
]
