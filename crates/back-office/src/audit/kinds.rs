//! The trail's entries as the documents type them: one schema for each kind of record a
//! trail holds, chosen by the entry's `action` (the `discriminator`), whose `before` and
//! `after` are that record. The server writes one [`Entry`] for every kind; only its
//! document is by kind, so that a generated client reads `before` and `after` as the record
//! they are once it has looked at `action`.

use std::borrow::Cow;

use serde::Serialize;
use utoipa::openapi::schema::{
    Discriminator, KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::{Action, Entry};
use crate::adjustments::AdjustmentRecord;
use crate::earn_rates::EarnRateTable;
use crate::expiry_policy::ExpiryPolicy;
use crate::gift_codes::BatchRecord;
use crate::occasions::OccasionRecord;
use crate::offers::OfferRecord;
use crate::role::Role;

/// An adjustment's `before`: the client's balance before it, as exact text.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = BalanceBefore)]
pub struct BalanceBefore {
    pub balance: String,
}

/// What a kind's `before` holds.
enum Before {
    /// The record, or null where the action had none (a creation, a read, a first policy).
    RecordOrNull,
    /// Another schema (an adjustment's: the balance before it).
    Other(Cow<'static, str>),
}

/// A kind of entry: its schema's name, its actions, its `before`, and its record's name.
struct Kind {
    name: &'static str,
    actions: &'static [Action],
    before: Before,
    record: Cow<'static, str>,
}

/// Every kind, each action in exactly one (the tests hold them to [`Action::ALL`]).
fn kinds() -> [Kind; 6] {
    use Action::*;
    let kind = |name, actions, before, record| Kind {
        name,
        actions,
        before,
        record,
    };
    [
        kind(
            "OfferAuditEntry",
            &[OfferCreate, OfferUpdate, OfferWithdraw][..],
            Before::RecordOrNull,
            OfferRecord::name(),
        ),
        kind(
            "OccasionAuditEntry",
            &[OccasionCreate, OccasionUpdate, OccasionWithdraw][..],
            Before::RecordOrNull,
            OccasionRecord::name(),
        ),
        kind(
            "ExpiryPolicyAuditEntry",
            &[ExpiryPolicyReplace][..],
            Before::RecordOrNull,
            ExpiryPolicy::name(),
        ),
        kind(
            "AdjustmentAuditEntry",
            &[AdjustmentCredit, AdjustmentDebit][..],
            Before::Other(BalanceBefore::name()),
            AdjustmentRecord::name(),
        ),
        kind(
            "GiftCodeBatchAuditEntry",
            &[
                GiftCodeBatchIssue,
                GiftCodeBatchRead,
                GiftCodeBatchExport,
                GiftCodeBatchWithdraw,
            ][..],
            Before::RecordOrNull,
            BatchRecord::name(),
        ),
        kind(
            "EarnRatesAuditEntry",
            &[EarnRatesReplace][..],
            Before::RecordOrNull,
            EarnRateTable::name(),
        ),
    ]
}

fn reference(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

fn text(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
}

/// One kind's entry: the keys of [`Entry`], in its order, with this kind's action, `before`
/// and `after`.
fn entry_schema(kind: &Kind) -> Schema {
    let before: RefOr<Schema> = match &kind.before {
        Before::RecordOrNull => OneOfBuilder::new()
            .item(reference(&kind.record))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .description(Some(
                "The record before the change; null where there was none (a creation, a read).",
            ))
            .into(),
        Before::Other(name) => reference(name),
    };
    let actions = kind.actions.iter().map(|action| action.as_str());
    ObjectBuilder::new()
        .description(Some(
            "One change, in this key order; `before` and `after` are the record `action` names.",
        ))
        .property(
            "id",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))),
        )
        .property("operatorId", text("The token's `sub`."))
        .property("role", reference(&Role::name()))
        .property(
            "action",
            text("What was done, `<record>.<change>`.").enum_values(Some(actions)),
        )
        .property(
            "subject",
            text("What was changed: `offer:<id>`, `client:<id>`, `gift-code-batch:<id>`, ..."),
        )
        .property("before", before)
        .property("after", reference(&kind.record))
        .property(
            "createdAt",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        )
        .required("id")
        .required("operatorId")
        .required("role")
        .required("action")
        .required("subject")
        .required("before")
        .required("after")
        .required("createdAt")
        .into()
}

impl PartialSchema for Entry {
    /// One of the kinds, by `action`.
    fn schema() -> RefOr<Schema> {
        let mut discriminator = Discriminator::new("action");
        let mut one_of = OneOfBuilder::new();
        for kind in kinds() {
            let target = format!("#/components/schemas/{}", kind.name);
            for action in kind.actions {
                discriminator
                    .mapping
                    .insert(action.as_str().to_owned(), target.clone());
            }
            one_of = one_of.item(reference(kind.name));
        }
        one_of
            .discriminator(Some(discriminator))
            .description(Some(
                "One change: who made it, what, and the record before and after, typed by \
                 `action`.",
            ))
            .into()
    }
}

impl ToSchema for Entry {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("BackOfficeAuditEntry")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for kind in kinds() {
            schemas.push((kind.name.to_owned(), entry_schema(&kind).into()));
        }
        fn with<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) {
            schemas.push((T::name().into_owned(), T::schema()));
            T::schemas(schemas);
        }
        with::<OfferRecord>(schemas);
        with::<OccasionRecord>(schemas);
        with::<ExpiryPolicy>(schemas);
        with::<AdjustmentRecord>(schemas);
        with::<BalanceBefore>(schemas);
        with::<BatchRecord>(schemas);
        with::<EarnRateTable>(schemas);
        with::<Role>(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_is_in_exactly_one_kind() {
        let mut listed: Vec<Action> = kinds().iter().flat_map(|k| k.actions.to_vec()).collect();
        let mut all = Action::ALL.to_vec();
        let key = |a: &Action| a.as_str();
        listed.sort_by_key(key);
        all.sort_by_key(key);
        assert_eq!(listed, all);
    }
}
