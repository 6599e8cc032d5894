-- The expiry policy's version (docs/decisions.md, "The loyalty back office"): each
-- replacement through the back office names the version it was made from, so that of two
-- operators editing at once the second is refused instead of undoing the first. Versions
-- come from a sequence, which never goes back: a seed that unsets the settings (deleting the
-- row) and sets them again cannot hand an old version out again, so an edit begun before
-- is still refused. A seed that changes the settings takes a new version; one that changes
-- nothing keeps it. 0 is "never set" (no row).
CREATE SEQUENCE point_settings_version AS INTEGER;
ALTER TABLE point_settings
    ADD COLUMN version INTEGER NOT NULL DEFAULT nextval('point_settings_version') CHECK (version >= 1);
ALTER SEQUENCE point_settings_version OWNED BY point_settings.version;
