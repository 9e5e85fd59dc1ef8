-- Catalogue search at 100,000 titles (issue 17): see SQLite's
-- 0021_search_indexes.sql. The title order is lower(title) by code point here
-- (catalog's postgresSearch.titleOrder).
CREATE INDEX items_record_status ON items (record_id, status, item_type_id, home_branch_id);
DROP INDEX items_record;

CREATE INDEX records_year ON records ((coalesce(year, 0)), id);
CREATE INDEX records_title ON records ((lower(title) COLLATE "C"), id);

ANALYZE items, records;
