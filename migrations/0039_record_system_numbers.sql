-- The 035 $a numbers of each record, as the import matcher compares them
-- (catalog's systemKey), so that matching an incoming record by its 035 reads
-- an index instead of every record's MARC. catalog writes a record's rows with
-- its MARC; they leave with the record.
CREATE TABLE record_system_numbers (
    key       TEXT NOT NULL,
    record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    PRIMARY KEY (key, record_id)
);
CREATE INDEX record_system_numbers_record ON record_system_numbers (record_id);

-- Whether a table catalog derives from the records' MARC holds every record's
-- part. A library whose records already carry 035 fields has its numbers
-- read from their MARC by catalog before its next import matches by them.
CREATE TABLE catalog_derived (
    name  TEXT PRIMARY KEY,
    built INTEGER NOT NULL
);
INSERT INTO catalog_derived (name, built)
SELECT 'record_system_numbers', CASE WHEN EXISTS (SELECT 1 FROM records WHERE marc LIKE '%tag="035"%') THEN 0 ELSE 1 END;
