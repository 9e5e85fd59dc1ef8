-- A card reported lost: see SQLite's 0027_card_lost.sql.
ALTER TABLE patrons ADD COLUMN card_lost bigint NOT NULL DEFAULT 0;
