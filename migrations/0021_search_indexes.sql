-- Catalogue search at 100,000 titles (issue 17): two kinds of index.
--
-- items_record_status replaces items_record (record_id alone; the new index's
-- first column serves every read by record_id). The search's facets, its
-- availability filter and the page's "n of m available" read a record's copies'
-- status, type and branch: from this index alone, without reading the items'
-- rows. The cost is at the desk: a check-out or check-in changes the item's
-- status, so it rewrites the item's entry in this index (one index entry more a
-- loan; docs/performance.md gives the measured cost).
CREATE INDEX items_record_status ON items (record_id, status, item_type_id, home_branch_id);
DROP INDEX items_record;

-- The year and title orders of a broad search walk these instead of sorting
-- every match (catalog.Search): the same expressions as the statements' ORDER BY.
CREATE INDEX records_year ON records (coalesce(year, 0), id);
CREATE INDEX records_title ON records (title COLLATE NOCASE, id);
