-- Search on PostgreSQL at 100,000 titles (issue 17): records_fts.words, the
-- vector the GIN index answers searches from, with each word twice: as it is,
-- and tagged with its field's weight letter ('Cfiction' for "fiction" in the
-- subjects, 'Aorchard' for "orchard" in the title).
--
-- A search within a field was a weight-restricted tsquery on doc
-- ('fiction':*C), which the GIN index cannot answer alone: it returns every
-- record with the word in any field, and each was read again and checked
-- ("Recheck Cond"), some 45,000 for subject:fiction, half a second. On words
-- the same search is 'Cfiction':*, which the index answers exactly, so a
-- count reads no rows and a scan checks a row at the cost of any other word.
--
-- doc stays as it was, for ranking (ts_rank with the fields' weights): words
-- is for matching only. Tags are capital letters, which to_tsvector never
-- leaves in a lexeme, so a tagged word cannot meet a plain one. Positions are
-- kept (a typed word the parser splits is matched as a phrase).

-- records_fts_fields is words for the record's doc: doc's lexemes and each
-- again with its weight letter in front, at the same positions.
CREATE FUNCTION records_fts_fields(doc tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT doc || coalesce(string_agg(t, ' '), '')::tsvector FROM (
        SELECT '''' || replace(replace(w || lexeme, '\', '\\'), '''', '''''') || ''':'
            || string_agg(pos || w, ',' ORDER BY pos) AS t
        FROM unnest(doc) AS u(lexeme, positions, weights), unnest(positions, weights) AS p(pos, w)
        GROUP BY lexeme, w) tagged
$$;

-- records_fts_query is to_tsquery('stacks_english', words) with each
-- weight-restricted word written as its tagged lexeme: 'fiction':*C becomes
-- 'Cfiction':* and 'orchard':A 'Aorchard', which words holds for exactly the
-- records whose doc has the word at a position of that weight.
-- (catalog.tsQueryText writes one weight letter a word.)
CREATE FUNCTION records_fts_query(words text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path FROM CURRENT AS $$
    SELECT regexp_replace(regexp_replace(to_tsquery('stacks_english', words)::text,
            '''((?:[^'']|'''')*)'':\*([ABCD])', '''\2\1'':*', 'g'),
        '''((?:[^'']|'''')*)'':([ABCD])', '''\2\1''', 'g')::tsquery
$$;

ALTER TABLE records_fts ADD COLUMN words tsvector GENERATED ALWAYS AS (records_fts_fields(doc)) STORED;
DROP INDEX records_fts_doc;
CREATE INDEX records_fts_words ON records_fts USING gin (words);

-- The planner's statistics for words (its lexemes' frequencies), without
-- waiting for autovacuum: a search's plan depends on how many records match.
ANALYZE records_fts;
