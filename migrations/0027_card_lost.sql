-- A card reported lost: staff tick "Card reported lost" on the patron's form
-- when the patron says the card is gone. The desk then shows a banner when the
-- card is scanned (someone else may be using it), until staff give the patron a
-- new card number and untick it.
ALTER TABLE patrons ADD COLUMN card_lost INTEGER NOT NULL DEFAULT 0;
