"""The web plugin's tool: ``web_fetch`` (`web_fetch`)."""
