-- Money and lost items (issue 16): lost and claimed-returned loans, processing fees
-- and replacement costs by rule, manual charges of configured types, payments of
-- chosen lines by method at a desk, refunds, voids, and the cash-up.

-- The ledger is rebuilt (SQLite cannot alter a CHECK constraint). Every row and id
-- is kept. New here:
--   - kinds: processing (the fee for handling a lost item), manual (a charge of a
--     configured type, named by charge_type), void (cancels the unpaid part of a
--     charge), credit (gives back a paid charge, such as a returned lost item's
--     replacement cost: the patron is then in credit) and refund (money handed back
--     to a patron in credit; positive, it brings the balance back towards zero);
--   - patron_id is NULLABLE: the privacy purge sets it NULL on a purged patron's
--     settled rows, so the cash-up of past days never changes;
--   - payment_method (cash, card, other) and branch_id (the desk) on payments and
--     refunds, for the receipt and the cash-up;
--   - reverses_id: the charge a void or credit reverses;
--   - charge_type: the configured type of a manual charge.
CREATE TABLE ledger_new (
    id             INTEGER PRIMARY KEY,
    patron_id      INTEGER REFERENCES patrons(id),
    kind           TEXT NOT NULL CHECK (kind IN ('overdue', 'lost', 'processing', 'fee', 'manual',
                       'payment', 'waiver', 'void', 'credit', 'refund')),
    amount_cents   INTEGER NOT NULL,
    loan_id        INTEGER REFERENCES loans(id),
    description    TEXT NOT NULL DEFAULT '',
    staff_id       INTEGER REFERENCES staff_users(id),
    created_at     TEXT NOT NULL,
    payment_method TEXT CHECK (payment_method IN ('cash', 'card', 'other')),
    branch_id      INTEGER REFERENCES branches(id),
    reverses_id    INTEGER REFERENCES ledger_new(id),
    charge_type    TEXT NOT NULL DEFAULT ''
);
INSERT INTO ledger_new (id, patron_id, kind, amount_cents, loan_id, description, staff_id, created_at)
    SELECT id, patron_id, kind, amount_cents, loan_id, description, staff_id, created_at FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_new RENAME TO ledger;
CREATE INDEX ledger_patron ON ledger (patron_id);
CREATE INDEX ledger_loan ON ledger (loan_id) WHERE loan_id IS NOT NULL;
CREATE INDEX ledger_desk_day ON ledger (created_at, branch_id) WHERE payment_method IS NOT NULL;
CREATE INDEX ledger_reverses ON ledger (reverses_id) WHERE reverses_id IS NOT NULL;

-- Which charges a payment (or waiver) paid, and how much of each: paying chosen
-- lines. A payment's allocations add up to its amount. Payments written before
-- 0014 have none; their credit is applied to the oldest charges first when the
-- open lines are listed.
CREATE TABLE ledger_allocations (
    payment_id   INTEGER NOT NULL REFERENCES ledger(id),
    charge_id    INTEGER NOT NULL REFERENCES ledger(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    PRIMARY KEY (payment_id, charge_id)
);
CREATE INDEX ledger_allocations_charge ON ledger_allocations (charge_id);

-- Configured manual charge types (lost card, printing, damaged item...).
CREATE TABLE charge_types (
    code          TEXT PRIMARY KEY,
    description   TEXT NOT NULL,
    default_cents INTEGER NOT NULL DEFAULT 0 CHECK (default_cents >= 0)
);
INSERT INTO charge_types (code, description, default_cents) VALUES
    ('CARD', 'Replacement library card', 200),
    ('DAMAGE', 'Damaged item', 0),
    ('PRINT', 'Printing and copying', 0);

-- Lost and claimed-returned loans stay current (returned_at NULL) until the item
-- comes back; these say since when. Added with ADD COLUMN so that they fit either
-- shape of the loans table.
ALTER TABLE loans ADD COLUMN lost_at TEXT;
ALTER TABLE loans ADD COLUMN claimed_returned_at TEXT;
CREATE INDEX loans_claimed_returned ON loans (claimed_returned_at) WHERE claimed_returned_at IS NOT NULL;

-- The replacement cost of an item whose own price is 0.
ALTER TABLE item_types ADD COLUMN default_price_cents INTEGER NOT NULL DEFAULT 0;

-- Lost item rules: lost_after_days, the days past due until the daily
-- job declares a loan lost (0 = never); processing_fee_cents billed with the
-- replacement cost; lost_return says what a lost item's return does to the
-- replacement cost (refund: void the unpaid part and credit the paid part; void:
-- void the unpaid part only; none); lost_return_fee says the same of the
-- processing fee (kept or refund).
ALTER TABLE circ_rules ADD COLUMN lost_after_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE circ_rules ADD COLUMN processing_fee_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE circ_rules ADD COLUMN lost_return TEXT NOT NULL DEFAULT 'refund'
    CHECK (lost_return IN ('refund', 'void', 'none'));
ALTER TABLE circ_rules ADD COLUMN lost_return_fee TEXT NOT NULL DEFAULT 'kept'
    CHECK (lost_return_fee IN ('kept', 'refund'));

-- What a check-in told the desk beyond the usual (a lost item's refund, a claim
-- closed, a missing item found), so the desk's running list shows it again.
ALTER TABLE checkins ADD COLUMN message TEXT NOT NULL DEFAULT '';
