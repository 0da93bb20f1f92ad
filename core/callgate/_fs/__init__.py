"""The fs layer: held roots and race-free confinement, the workspace, globs, atomic
publishing, writer and read leases, and the observation ledger. Imports only lower layers.
"""
