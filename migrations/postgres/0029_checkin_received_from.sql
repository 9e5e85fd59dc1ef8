-- The branch a checkin received its item from: see SQLite's
-- 0029_checkin_received_from.sql.
ALTER TABLE checkins ADD COLUMN received_from_id bigint REFERENCES branches(id);
