//! Diesel's view of `migrations/catalog`, kept in step by hand. The back office's trail
//! (`back_office_audit`) is not here: the `back-office` crate owns it and reads and writes it
//! in SQL.

diesel::table! {
    services (id) {
        id -> Int8,
        title -> Text,
        title_translated -> Text,
        status -> Text,
        logo -> Text,
        logo_variants -> Nullable<Jsonb>,
        ordering -> Int4,
        image -> Nullable<Text>,
        image_en -> Nullable<Text>,
        thumbnail -> Nullable<Text>,
        thumbnail_en -> Nullable<Text>,
        url -> Nullable<Text>,
        background_image_url -> Nullable<Text>,
        service_type -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        hierarchy_role -> Text,
        parent_id -> Nullable<Int8>,
    }
}

diesel::table! {
    system_configs (key) {
        key -> Text,
        value -> Jsonb,
        updated_at -> Timestamptz,
        version -> Int8,
    }
}

diesel::table! {
    gift_card_codes (code) {
        code -> Text,
        points -> Numeric,
        active -> Bool,
        created_at -> Timestamptz,
        batch_id -> Nullable<Int8>,
        expires_at -> Nullable<Timestamptz>,
        withdrawn_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    gift_card_batches (id) {
        id -> Int8,
        reference -> Text,
        code_count -> Int4,
        points -> Numeric,
        prefix -> Nullable<Text>,
        expires_at -> Nullable<Timestamptz>,
        created_by -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    stores (id) {
        id -> Int8,
        merchant_id -> Int8,
        real_merchant_id -> Nullable<Int8>,
        name -> Text,
        latitude -> Nullable<Float8>,
        longitude -> Nullable<Float8>,
        management_status -> Text,
        is_online -> Nullable<Bool>,
        store_disabled_ordering -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    banners (id) {
        id -> Int8,
        link_type -> Text,
        merchant_id -> Nullable<Int8>,
        nearest_branch_merchant_id -> Nullable<Int8>,
    }
}

diesel::table! {
    gift_card_redemptions (id) {
        id -> Int8,
        code -> Text,
        client_id -> Int8,
        points -> Numeric,
        status -> Text,
        created_at -> Timestamptz,
        credited_at -> Nullable<Timestamptz>,
        attempts -> Int4,
        lease_until -> Nullable<Timestamptz>,
        next_attempt_at -> Timestamptz,
        last_error -> Nullable<Text>,
        answered_at -> Nullable<Timestamptz>,
        credit_target -> Nullable<Text>,
        credit_reference -> Text,
        taken_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    gift_card_tries (id) {
        id -> Int8,
        client_id -> Int8,
        ip -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    operator_audit (id) {
        id -> Int8,
        operator_id -> Text,
        role -> Text,
        action -> Text,
        service_ids -> Array<Int8>,
        before -> Jsonb,
        after -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(gift_card_redemptions -> gift_card_codes (code));
diesel::joinable!(gift_card_codes -> gift_card_batches (batch_id));
diesel::allow_tables_to_appear_in_same_query!(
    services,
    system_configs,
    gift_card_codes,
    stores,
    banners,
    gift_card_redemptions,
    gift_card_tries,
    operator_audit,
    gift_card_batches,
);
