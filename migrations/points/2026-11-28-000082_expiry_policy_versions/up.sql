-- The expiry policy's version (docs/decisions.md, "The loyalty back office"): each
-- replacement through the back office names the version it was made from and adds 1, so
-- that of two operators editing at once the second is refused instead of undoing the first.
-- A seed that changes the settings moves it too. 0 is "never set" (no row).
ALTER TABLE point_settings ADD COLUMN version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1);
