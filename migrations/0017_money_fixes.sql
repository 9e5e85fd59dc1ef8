-- Money fixes after review (issue 16).

-- lost_forgive_fine: when a loan is declared lost (by staff or the daily job),
-- the overdue fine accrued up to that moment is charged then, by the rule and
-- the calendar, unless this is 1 (Koha's WhenLostForgiveFine).
ALTER TABLE circ_rules ADD COLUMN lost_forgive_fine INTEGER NOT NULL DEFAULT 0
    CHECK (lost_forgive_fine IN (0, 1));

-- lost_fine_settled: 1 when the declaration settled the loan's fine up to lost_at
-- (charged or forgiven), so the return of the item charges no more for it. Loans
-- declared lost before this migration keep 0: their return charges the fine up
-- to lost_at, as it did.
ALTER TABLE loans ADD COLUMN lost_fine_settled INTEGER NOT NULL DEFAULT 0;

-- The claims a patron ever made, kept on the patron (as Evergreen does): the
-- loans that recorded them are anonymised in time, and a count taken from them
-- would fall. Incremented at each claim; backfilled here from the loans.
ALTER TABLE patrons ADD COLUMN claims_returned_count INTEGER NOT NULL DEFAULT 0;
UPDATE patrons SET claims_returned_count =
    (SELECT count(*) FROM loans l WHERE l.patron_id = patrons.id AND l.claimed_returned_at IS NOT NULL)
    WHERE EXISTS (SELECT 1 FROM loans l WHERE l.patron_id = patrons.id AND l.claimed_returned_at IS NOT NULL);

-- The cash-up reads one desk's (branch's) payments and refunds of one day, in time
-- order. Branch first: EXPLAIN QUERY PLAN goes from a search on the day's range
-- with a temporary B-tree for the ORDER BY to a search on (branch_id=? AND
-- created_at>? AND created_at<?) in index order, reading no other desk's rows.
DROP INDEX ledger_desk_day;
CREATE INDEX ledger_desk_day ON ledger (branch_id, created_at) WHERE payment_method IS NOT NULL;
