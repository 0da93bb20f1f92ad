"""The results layer: the result store (whole results, head + marker + tail), notices
and the storm breaker. Imports only lower layers.
"""
