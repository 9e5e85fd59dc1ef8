-- A checkin the desk must act on (a hold found, a copy to send to another branch, a
-- withdrawn copy, a message for the desk) stays on the Check in page until staff
-- acknowledge it: needs_ack marks it when it is recorded in a desk's list (batch),
-- acked_at and acked_by say when and by whom it was acknowledged.
ALTER TABLE checkins ADD COLUMN needs_ack INTEGER NOT NULL DEFAULT 0;
ALTER TABLE checkins ADD COLUMN acked_at TEXT;
ALTER TABLE checkins ADD COLUMN acked_by TEXT;
CREATE INDEX checkins_unacknowledged ON checkins (batch, id) WHERE needs_ack = 1 AND acked_at IS NULL;
