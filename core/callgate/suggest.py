""" "Did you mean": the one rule for close names, so every refusal that suggests a name (the
pipeline's unknown tool, the capability proxy's unknown capability, MCP server and tool
names) suggests what works and means what the model meant (`close_names`)."""

from ._pipeline.suggest import close_names, meanings_of

__all__ = ["close_names", "meanings_of"]
