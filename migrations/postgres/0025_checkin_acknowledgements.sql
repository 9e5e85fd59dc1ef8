-- The checkins the desk must acknowledge: see SQLite's 0025_checkin_acknowledgements.sql.
ALTER TABLE checkins ADD COLUMN needs_ack bigint NOT NULL DEFAULT 0;
ALTER TABLE checkins ADD COLUMN acked_at text;
ALTER TABLE checkins ADD COLUMN acked_by text;
CREATE INDEX checkins_unacknowledged ON checkins (batch, id) WHERE needs_ack = 1 AND acked_at IS NULL;
