-- Two more settings of each SIP account: see SQLite's 0030_sip_account_settings.sql.
ALTER TABLE sip_accounts ADD COLUMN same_item_checkout text NOT NULL DEFAULT 'answer';
ALTER TABLE sip_accounts ADD COLUMN language text NOT NULL DEFAULT '000';
