-- An item's shelving location (issue 19, stocktake by location): the part of the
-- branch it is shelved in, such as "Adult fiction", "Reference" or "Children",
-- as Koha's items.location (952 $c) and Evergreen's copy location. Free text,
-- empty for none.
ALTER TABLE items ADD COLUMN location TEXT NOT NULL DEFAULT '';

-- A branch's shelves by location, for a stocktake of one location (its expected
-- and missing items) and the list of locations in use at a branch. Partial on a
-- location, and written only when an item's home branch, location or call number
-- changes (the item form, an import), which a checkout or checkin never does.
CREATE INDEX items_location ON items (home_branch_id, location, call_number) WHERE location <> '';

-- A stocktake of one location at a branch: call_from and call_to are empty then.
ALTER TABLE stocktakes ADD COLUMN location TEXT NOT NULL DEFAULT '';
