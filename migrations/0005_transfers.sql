-- Transfers between branches: the items in transit to or from a branch, and the
-- checkin that sent each one (for its transit slip and the time it left).
--
-- Only items in transit are in the partial index, so listing a branch's transfers
-- reads those and not the whole collection.
CREATE INDEX items_in_transit ON items (transit_to_id, current_branch_id) WHERE status = 'in_transit';
-- The latest checkin of an item, found without reading every checkin.
CREATE INDEX checkins_item ON checkins (item_id, id);
