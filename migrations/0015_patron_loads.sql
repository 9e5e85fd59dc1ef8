-- Patron loads (issue 16): a patron may carry an identifier from another system
-- (a school's student number, a council's resident id), so that a yearly file
-- from that system updates the same patrons even when their cards changed.
-- NULL when there is none; two patrons never share one.
ALTER TABLE patrons ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX patrons_external_id ON patrons (external_id) WHERE external_id IS NOT NULL;
