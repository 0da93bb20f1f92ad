"""The validation layer: JSON Schema dialects, the fast check, patterns under a time
budget, and the argument feedback the model reads. Imports only lower layers.
"""
