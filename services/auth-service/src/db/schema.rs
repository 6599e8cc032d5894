//! Diesel's view of `migrations/auth`.

diesel::table! {
    clients (client_id) {
        client_id -> Int8,
        odoo_id -> Text,
        contact_phone -> Text,
        status -> Text,
        email_address -> Nullable<Text>,
        first_name -> Nullable<Text>,
        last_name -> Nullable<Text>,
        sex -> Int2,
        birth_date -> Nullable<Date>,
        receive_offers -> Int2,
        push_enabled -> Int2,
        is_food_truck_user -> Int2,
        is_cod_disabled -> Int2,
        test_mode -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    legacy_tokens (token_hash) {
        token_hash -> Bytea,
        client_id -> Int8,
        source -> Text,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(legacy_tokens -> clients (client_id));
diesel::allow_tables_to_appear_in_same_query!(clients, legacy_tokens);

diesel::table! {
    otp_codes (client_id) {
        client_id -> Int8,
        code_hash -> Bytea,
        expires_at -> Timestamptz,
        failed_attempts -> Int4,
        created_at -> Timestamptz,
        sent_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    client_events (id) {
        id -> Int8,
        kind -> Text,
        client_id -> Int8,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    otp_events (id) {
        id -> Int8,
        kind -> Text,
        phone -> Text,
        ip -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    addresses (id) {
        id -> Bpchar,
        legacy_id -> Nullable<Int8>,
        client_id -> Int8,
        label -> Text,
        address_line -> Text,
        city -> Text,
        district -> Nullable<Text>,
        building -> Nullable<Text>,
        latitude -> Float8,
        longitude -> Float8,
        notes -> Nullable<Text>,
        is_default -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(otp_codes -> clients (client_id));
diesel::joinable!(addresses -> clients (client_id));
diesel::joinable!(client_events -> clients (client_id));
diesel::allow_tables_to_appear_in_same_query!(
    clients,
    otp_codes,
    otp_events,
    addresses,
    client_events
);
