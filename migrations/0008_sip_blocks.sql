-- SIP2 messages a self-check sends that change the library's data (issue 14).
--
-- block_source says who set a patron's block: '' for staff (every block before
-- this migration), 'sip' for a self-check that sent Block Patron (01), usually
-- when it kept the card. Patron Enable (25) from a terminal lifts only a block a
-- terminal set; a staff block stays until staff lift it.
ALTER TABLE patrons ADD COLUMN block_source TEXT NOT NULL DEFAULT '';

-- sip_properties is an item's SIP "item properties" (the CH field), set by Item
-- Status Update (19): free text the terminals agree on (a security marker's
-- kind, a number of discs), stored as sent.
ALTER TABLE items ADD COLUMN sip_properties TEXT NOT NULL DEFAULT '';
