-- Two more settings of each SIP account (see sip.Settings):
--   same_item_checkout  how a checkout (11) of an item the patron already has is
--                       answered: 'answer' (as lent, with its due date, nothing
--                       changed: a kiosk that sends its checkout again spends no
--                       renewal) or 'renew' (renewed when the checkout's renewal
--                       policy is Y, refused when N; Koha renews it
--                       whatever the policy).
--   language            the SIP2 language code of the patron status answers (24,
--                       26, 64): '000' unknown to '027'.
-- The accounts that exist get the defaults: 'answer', and '000', the spec's code
-- for a language not known (they sent '001', English, before).
ALTER TABLE sip_accounts ADD COLUMN same_item_checkout TEXT NOT NULL DEFAULT 'answer';
ALTER TABLE sip_accounts ADD COLUMN language TEXT NOT NULL DEFAULT '000';
