-- SIP2 logins and PINs are counted in login_throttle: see SQLite's
-- 0035_sip_lockouts_in_login_throttle.sql.
INSERT INTO login_throttle (key, failures, first_at, locked_until)
    SELECT key, failures, window_start, locked_until FROM sip_lockouts
    ON CONFLICT (key) DO NOTHING;
DROP TABLE sip_lockouts;
