-- The waive permission of a staff account: see SQLite's 0028_staff_can_waive.sql.
ALTER TABLE staff_users ADD COLUMN can_waive bigint NOT NULL DEFAULT 0;
