//! Diesel's view of `migrations/points`. The back office's trail and read log
//! (`back_office_audit`, `back_office_reads`) are not here: the `back-office` crate owns them
//! and reads and writes them in SQL.

diesel::table! {
    point_settings (singleton) {
        singleton -> Bool,
        expiry -> Text,
        inactivity_days -> Nullable<Int4>,
        updated_at -> Timestamptz,
        version -> Int4,
    }
}

diesel::table! {
    point_accounts (client_id) {
        client_id -> Int8,
        balance -> Numeric,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    point_entries (id) {
        id -> Int8,
        client_id -> Int8,
        kind -> Text,
        points -> Numeric,
        order_correlation_id -> Nullable<Uuid>,
        reference -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    point_offers (id) {
        id -> Bpchar,
        point_amount -> Numeric,
        purchased_point_amount -> Nullable<Numeric>,
        amount -> Numeric,
        sequence -> Nullable<Int4>,
        legacy_id -> Nullable<Int4>,
        active -> Bool,
        deleted -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    point_occasions (id) {
        id -> Bpchar,
        occasion_en -> Text,
        occasion_ar -> Nullable<Text>,
        is_custom -> Int2,
        active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    points_faq (position) {
        position -> Int4,
        question_en -> Text,
        answer_en -> Text,
        question_ar -> Text,
        answer_ar -> Text,
    }
}

diesel::table! {
    point_orders (correlation_id) {
        correlation_id -> Uuid,
        order_no -> Nullable<Int8>,
        payer_id -> Int8,
        recipient_id -> Int8,
        point_offer_id -> Nullable<Bpchar>,
        status -> Text,
        payment_status -> Nullable<Text>,
        point_amount -> Numeric,
        purchased_point_amount -> Nullable<Numeric>,
        money_amount -> Numeric,
        payment_type -> Text,
        order_type -> Text,
        point_occasion_id -> Nullable<Bpchar>,
        occasion -> Nullable<Text>,
        payment_provider -> Nullable<Text>,
        payment_reference -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(point_entries -> point_accounts (client_id));
diesel::allow_tables_to_appear_in_same_query!(
    point_settings,
    point_accounts,
    point_entries,
    point_offers,
    point_occasions,
    points_faq,
    point_orders,
);

diesel::table! {
    idempotency_keys (client_id, key) {
        client_id -> Int8,
        key -> Text,
        request_hash -> Bytea,
        correlation_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    payment_events (id) {
        id -> Text,
        #[sql_name = "type"]
        kind -> Text,
        reference -> Text,
        payment_id -> Nullable<Text>,
        amount_minor -> Nullable<Int8>,
        currency -> Nullable<Text>,
        outcome -> Text,
        received_at -> Timestamptz,
        body -> Nullable<Text>,
    }
}

diesel::table! {
    internal_credits (reference) {
        reference -> Text,
        client_id -> Int8,
        points -> Numeric,
        reason -> Text,
        balance_after -> Numeric,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(idempotency_keys -> point_orders (correlation_id));
diesel::allow_tables_to_appear_in_same_query!(idempotency_keys, point_orders);

diesel::table! {
    payment_attempts (id) {
        id -> Int8,
        correlation_id -> Uuid,
        kind -> Text,
        state -> Text,
        payment_id -> Nullable<Text>,
        started_at -> Timestamptz,
        answered_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    unapplied_captures (event_id) {
        event_id -> Text,
        reference -> Text,
        correlation_id -> Nullable<Uuid>,
        payment_id -> Nullable<Text>,
        amount_minor -> Nullable<Int8>,
        currency -> Nullable<Text>,
        reason -> Text,
        recorded_at -> Timestamptz,
        resolved_at -> Nullable<Timestamptz>,
        resolution -> Nullable<Text>,
    }
}

diesel::table! {
    payment_syncs (correlation_id) {
        correlation_id -> Uuid,
        since -> Timestamptz,
        due_at -> Timestamptz,
        tries -> Int4,
        generation -> Int8,
        last_error -> Nullable<Text>,
        listed_at -> Nullable<Timestamptz>,
        resolved_at -> Nullable<Timestamptz>,
        resolution -> Nullable<Text>,
        disagreements -> Int4,
    }
}

diesel::table! {
    payment_sync_readings (correlation_id, payment_id) {
        correlation_id -> Uuid,
        payment_id -> Text,
        status -> Text,
        amount_minor -> Int8,
        currency -> Text,
        read_at -> Timestamptz,
    }
}

diesel::table! {
    worker_leases (name) {
        name -> Text,
        holder -> Text,
        until -> Timestamptz,
    }
}

diesel::table! {
    settlement_checks (day) {
        day -> Date,
        checked_at -> Timestamptz,
        outcome -> Text,
        differences -> Int4,
    }
}

diesel::table! {
    support_adjustments (reference) {
        reference -> Text,
        client_id -> Int8,
        points -> Numeric,
        reason -> Text,
        operator_id -> Text,
        operator_role -> Text,
        balance_after -> Numeric,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(payment_attempts -> point_orders (correlation_id));
diesel::joinable!(payment_syncs -> point_orders (correlation_id));
diesel::joinable!(payment_sync_readings -> payment_syncs (correlation_id));
diesel::joinable!(unapplied_captures -> payment_events (event_id));
diesel::allow_tables_to_appear_in_same_query!(
    payment_attempts,
    point_orders,
    unapplied_captures,
    payment_events,
    payment_syncs
);
