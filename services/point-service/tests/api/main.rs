//! The point service over real HTTP against a real database of its own, with real HTTP
//! servers playing the auth service and the payment service.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod attempts;
mod audit;
mod auth;
mod back_office;
mod back_office_adjustments;
mod back_office_expiry_policy;
mod back_office_occasions;
mod back_office_offer_limit;
mod back_office_reads;
mod balance;
mod batches;
mod bounds;
mod concurrency;
mod credits;
mod decimals;
mod events;
mod events_of_orders;
mod expiry;
mod expiry_attacks;
mod expiry_notices;
mod expiry_reports;
mod gateway;
mod helpers;
mod housekeeping;
mod metrics;
mod offers;
mod openapi;
mod orders;
mod pay;
mod pay_stale;
mod reconcile;
mod seed;
mod states;
mod sync;
mod sync_not_final;
mod unapplied;
mod unreadable;
mod webhook;
