-- A message staff leave on a patron for the desk ("Ask for the new address", "Has
-- a parcel waiting"), shown at check out and on the patron page until someone
-- dismisses it (Koha's circulation messages); '' when there is none.
--
-- A card's renewal period is the category's existing card_months.
ALTER TABLE patrons ADD COLUMN desk_message TEXT NOT NULL DEFAULT '';
