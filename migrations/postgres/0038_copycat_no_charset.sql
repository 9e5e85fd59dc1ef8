-- A copy cataloguing target has no character set of its own any more: the
-- ISO 2709 reader takes a record whose leader does not declare UTF-8 as UTF-8
-- when its bytes are, else as MARC-8, and the setting could only spoil a
-- MARC-8 record. Its column (0032) goes; nothing reads it.
ALTER TABLE copycat_targets DROP COLUMN charset;
