"""The store layer: what the session store holds (records and ops), its names and errors,
the recorder thread, where a store is and which backend opens it (the backends, SQLite
included, are distributions of their own), and what one session writes (the journal).
Imports only lower layers.
"""
