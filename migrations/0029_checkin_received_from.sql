-- The branch a checkin received its item from: set when the item was in transit
-- to the branch it was checked in at (a transfer or a hold's copy arriving), so
-- that the desk's list of returns says "Received from Westside".
ALTER TABLE checkins ADD COLUMN received_from_id INTEGER REFERENCES branches(id);
