"""The store layer: what the session store holds (records and ops), its names and errors,
the recorder thread, where a store is and which backend opens it, the SQLite backend, and
what one session writes (the journal). Imports only lower layers.
"""
