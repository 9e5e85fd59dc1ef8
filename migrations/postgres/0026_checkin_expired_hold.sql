-- A checkin records the hold it ended because its pickup time was over (the copy
-- was set aside for it on the hold shelf), so that the desk's list says so beside
-- where the copy went next.
ALTER TABLE checkins ADD COLUMN expired_hold_id bigint REFERENCES holds(id);
