-- The holds a batch withdrawal cancelled (holds asked for one of its copies),
-- with their places in their queues, so that undoing the batch puts them back
-- where they were. hold_id has no foreign key: a patron's holds leave with the
-- patron (the privacy purge), and an undo restores only the holds still there.
CREATE TABLE item_batch_holds (
    batch_id INTEGER NOT NULL REFERENCES item_batches(id),
    hold_id  INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    PRIMARY KEY (batch_id, hold_id)
);
