-- version 2: ranked full-text search over the timeline (FTS5, bm25). The index holds no
-- copy of the text: it reads entries (external content), kept in step by triggers.

CREATE VIRTUAL TABLE search USING fts5(
    arguments, text, content = 'entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries BEGIN
    INSERT INTO search (rowid, arguments, text) VALUES (new.id, new.arguments, new.text);
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries BEGIN
    INSERT INTO search (search, rowid, arguments, text)
        VALUES ('delete', old.id, old.arguments, old.text);
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF arguments, text ON entries BEGIN
    INSERT INTO search (search, rowid, arguments, text)
        VALUES ('delete', old.id, old.arguments, old.text);
    INSERT INTO search (rowid, arguments, text) VALUES (new.id, new.arguments, new.text);
END;

-- what version 1 recorded becomes searchable
INSERT INTO search (search) VALUES ('rebuild');
