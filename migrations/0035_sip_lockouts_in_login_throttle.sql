-- SIP2 logins and PINs are counted by the one sign-in throttle, in
-- login_throttle, under keys of their own:
--   'login:<username>|<address>'  an account's logins from one address
--   'login:<username>'            the budget its unknown addresses share
--   'pin:<patron id>'             a patron's PINs from any terminal
-- The counts and the lockouts running move there, so that the upgrade lifts
-- none, and sip_lockouts goes.
INSERT INTO login_throttle (key, failures, first_at, locked_until)
    SELECT key, failures, window_start, locked_until FROM sip_lockouts WHERE true
    ON CONFLICT (key) DO NOTHING;
DROP TABLE sip_lockouts;
