-- The waive permission of a staff account: 1 lets a circulation account waive
-- fines (patrons.WaiveLines checks it in the waiver's transaction);
-- administrators may always waive. Set on Administration -> Staff.
ALTER TABLE staff_users ADD COLUMN can_waive INTEGER NOT NULL DEFAULT 0;
