""""Did you mean": the one rule for close names, so every refusal that suggests a name (the
pipeline's unknown tool, the capability proxy's unknown capability, MCP server and tool
names) suggests what works and means what the model meant (`close_names`)."""

from ._suggest import SAME_MEANING, close_names

__all__ = ["SAME_MEANING", "close_names"]
