-- version 2: ranked full-text search over the timeline (FTS5, bm25), in two indexes that
-- hold no copy of the text (external content: they read entries, kept in step by
-- triggers):
--   search_talk:   what was said and asked: messages' text, calls' arguments, the text of
--                  results that were errors;
--   search_output: the text of results that were not errors (searched only when asked:
--                  it is most of the volume).
-- Each trigger indexes and unindexes a row with the same expressions, so a row's tokens
-- are removed exactly as they were added.

CREATE VIRTUAL TABLE search_talk USING fts5(
    arguments, text, content = 'entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE search_output USING fts5(
    text, content = 'entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries BEGIN
    INSERT INTO search_talk (rowid, arguments, text) VALUES (new.id, new.arguments,
        CASE WHEN new.kind = 'message' OR new.is_error = 1 THEN new.text END);
    INSERT INTO search_output (rowid, text) SELECT new.id, new.text
        WHERE new.kind = 'call' AND new.is_error = 0 AND new.text IS NOT NULL;
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries BEGIN
    INSERT INTO search_talk (search_talk, rowid, arguments, text) VALUES ('delete', old.id,
        old.arguments, CASE WHEN old.kind = 'message' OR old.is_error = 1 THEN old.text END);
    INSERT INTO search_output (search_output, rowid, text) SELECT 'delete', old.id, old.text
        WHERE old.kind = 'call' AND old.is_error = 0 AND old.text IS NOT NULL;
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF arguments, text, is_error ON entries
BEGIN
    INSERT INTO search_talk (search_talk, rowid, arguments, text) VALUES ('delete', old.id,
        old.arguments, CASE WHEN old.kind = 'message' OR old.is_error = 1 THEN old.text END);
    INSERT INTO search_output (search_output, rowid, text) SELECT 'delete', old.id, old.text
        WHERE old.kind = 'call' AND old.is_error = 0 AND old.text IS NOT NULL;
    INSERT INTO search_talk (rowid, arguments, text) VALUES (new.id, new.arguments,
        CASE WHEN new.kind = 'message' OR new.is_error = 1 THEN new.text END);
    INSERT INTO search_output (rowid, text) SELECT new.id, new.text
        WHERE new.kind = 'call' AND new.is_error = 0 AND new.text IS NOT NULL;
END;

-- what version 1 recorded becomes searchable
INSERT INTO search_talk (rowid, arguments, text)
    SELECT id, arguments, CASE WHEN kind = 'message' OR is_error = 1 THEN text END
    FROM entries;
INSERT INTO search_output (rowid, text)
    SELECT id, text FROM entries WHERE kind = 'call' AND is_error = 0 AND text IS NOT NULL;
