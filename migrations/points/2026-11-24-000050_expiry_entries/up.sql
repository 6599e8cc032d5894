-- Points expiry (`point-service expire-points`): an `expiry` entry takes a client's whole
-- positive balance once the expiry date the balance answers has passed. It is negative, and
-- its reference names the client, that date and the Riyadh date of the run that wrote it,
-- `expiry:<client_id>:<YYYY-MM-DD>:<YYYY-MM-DD>`: with the reference UNIQUE, a client's
-- points expire at most once a day per expiry date, however many runs (or replicas) try at
-- once. Here only the form is checked; `point-service audit` checks that both are real
-- dates, that the run date is the entry's own, and the rest of the rule.
ALTER TABLE point_entries DROP CONSTRAINT point_entries_kind_check;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_kind_check CHECK (kind IN (
    'earn', 'spend', 'gift_sent', 'gift_received', 'purchase', 'gift_card_credit', 'adjustment',
    'expiry'));

ALTER TABLE point_entries DROP CONSTRAINT point_entries_sign;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_sign CHECK (CASE
    WHEN kind IN ('spend', 'gift_sent', 'expiry') THEN points < 0
    WHEN kind = 'adjustment' THEN points <> 0
    ELSE points > 0
END);

ALTER TABLE point_entries ADD CONSTRAINT point_entries_expiry_reference CHECK (
    kind <> 'expiry'
    OR (reference IS NOT NULL
        AND reference ~ ('^expiry:' || client_id || ':[0-9]{4}-[0-9]{2}-[0-9]{2}:[0-9]{4}-[0-9]{2}-[0-9]{2}$')
        AND order_correlation_id IS NULL));
