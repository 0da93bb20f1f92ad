"""The registry layer: what plugins add at boot, checked as it is added. Imports only
lower layers.
"""
