"""The ask plugin's tools: ``ask`` (`ask`)."""
