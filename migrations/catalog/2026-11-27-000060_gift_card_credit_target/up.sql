-- Where each gift-card redemption is credited, and the reference it is credited under, both
-- fixed when the redemption is made: every try (the redeeming request's, a retry task's on
-- any replica, the owner's retry) sends that reference to that target, whatever
-- `USE_POINT_SERVICE` says by then or on another replica. Before this migration each try
-- read the target from its own process's configuration, so a legacy credit that failed
-- and was retried after the switch (or by a replica configured otherwise) could land in
-- both ledgers.
--
-- `credit_reference` is what the point service or the legacy system applies once. New
-- redemptions get `gift-card:<code>`: a code is unique and redeemed once, ever, so the
-- reference names one credit even in a catalog restored from a backup, whose sequence can
-- hand an id out again (`gift-card:<id>` would then name two credits, and the point
-- service would apply only the first). Existing rows keep `gift-card:<id>`, the reference
-- their tries were sent under: a pending one may have landed already, and sending it again
-- under a new reference would credit it twice.
--
-- `credit_target` is `point_service` or `legacy`. New rows get it from the configuration of
-- the replica that makes them. For existing rows the migration cannot know it: a pending
-- row's earlier tries went where the configuration said then, which no table recorded. So
-- they stay NULL, and the first try after this migration fixes it (in the statement that
-- takes the lease) from the configuration of the replica making that try, which is what
-- every try did before; from then on it never changes. A credited row is never tried
-- again, so its target stays NULL (unknown). New rows always have one.
ALTER TABLE gift_card_redemptions
    ADD COLUMN credit_target    TEXT CHECK (credit_target IN ('point_service', 'legacy')),
    ADD COLUMN credit_reference TEXT,
    -- When a lease was last taken by an order service from this migration on: each of its
    -- statements that take one (an insert or an update) sets it, to `clock_timestamp()`
    -- (a later value than it had: see the guard below). NULL on rows none of them took.
    ADD COLUMN taken_at         TIMESTAMPTZ;

UPDATE gift_card_redemptions SET credit_reference = 'gift-card:' || id;

ALTER TABLE gift_card_redemptions
    ALTER COLUMN credit_reference SET NOT NULL,
    ADD CONSTRAINT gift_card_redemptions_credit_reference_key UNIQUE (credit_reference);

-- A row without a target is one made before this migration, credited under its id. The
-- references are unique: a code that reads as an old row's id (`gift-card:17`) cannot be
-- credited under that row's reference; its redemption is refused instead.
ALTER TABLE gift_card_redemptions
    ADD CONSTRAINT gift_card_redemptions_target_known
        CHECK (credit_target IS NOT NULL OR credit_reference = 'gift-card:' || id);

-- The guard, one trigger for two rules.
--
-- Fixed means fixed: the reference never changes, and a target, once set, neither.
--
-- Only code from this migration on takes a lease of a row credited under its code. During
-- a rolling deploy, order services of the release before keep running after this
-- migration. They take a lease with `UPDATE … SET lease_until = now() + …, attempts =
-- attempts + 1` (their retry pass, on the most overdue free pending row; their request
-- path, on the row of the code being redeemed) and send the credit under `gift-card:<id>`
-- to where their own configuration says. On a row credited under `gift-card:<code>` whose
-- first try failed, or landed but was not written down, that is a second credit: another
-- reference, which the other side applies as a credit of its own. So such a take is
-- refused here.
-- Old code cannot make such rows (it inserts no `credit_reference`, which is NOT NULL
-- without a default); rows made before this migration (`gift-card:<id>`, the reference
-- old code sends) stay theirs to credit, as they must while the rollout lasts.
--
-- What tells a take: `attempts` moves. Every statement that takes a lease, old or new,
-- adds one to it (it fences the holder's release), and no other statement touches it
-- (giving a lease back, writing down a credit, the 200 given). What tells new code: it
-- moves `taken_at` in the same statement, which old code does not know. New code's takes
-- set it to `GREATEST(clock_timestamp(), taken_at + 1 microsecond)`, a later value than
-- it had even with the server's clock set back, so they never trip this; its other
-- statements leave `attempts` alone, and its inserts are no updates. New code cannot be
-- wedged by it.
--
-- What an old order service does when refused: its statement fails and changes nothing
-- (the row keeps its lease free, its attempts and its next try, for a new replica to
-- take). Its retry pass logs the failure ("gift-card retry pass failed; the next one tries
-- again") and tries again next pass, failing again while that row is the most overdue free
-- one, until a new replica has credited it or given it a later next try, or the old
-- replica is replaced (harmless: new replicas credit every row meanwhile). On its request
-- path the owner's request fails there (500); asked again at a new replica, it is
-- credited. Nothing is credited twice.
CREATE FUNCTION gift_card_redemptions_credit_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.credit_reference IS DISTINCT FROM OLD.credit_reference
       OR (OLD.credit_target IS NOT NULL AND NEW.credit_target IS DISTINCT FROM OLD.credit_target) THEN
        RAISE EXCEPTION 'gift-card redemption %: its credit target and reference never change', OLD.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'gift_card_redemptions_credit_fixed';
    END IF;
    IF NEW.attempts IS DISTINCT FROM OLD.attempts
       AND NEW.taken_at IS NOT DISTINCT FROM OLD.taken_at
       AND OLD.credit_reference <> 'gift-card:' || OLD.id THEN
        RAISE EXCEPTION 'redemption % has a code-derived credit reference; an order service from before migration 2026-11-27-000060 cannot credit it', OLD.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'gift_card_redemptions_taken_by_current_code',
                  DETAIL = format('Its credit reference is %L; the statement took its lease (attempts %s to %s) without setting taken_at.',
                                  OLD.credit_reference, OLD.attempts, NEW.attempts),
                  HINT = 'Replace the order service replicas of the release before; a current one credits it.';
    END IF;
    RETURN NEW;
END;
$$;
-- `attempts`: a take sets it (column triggers fire on the columns a statement sets).
CREATE TRIGGER gift_card_redemptions_credit_guard
    BEFORE UPDATE OF credit_target, credit_reference, attempts ON gift_card_redemptions
    FOR EACH ROW EXECUTE FUNCTION gift_card_redemptions_credit_guard();
