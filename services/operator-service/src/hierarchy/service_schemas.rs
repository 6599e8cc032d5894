//! How the document shows a service's rows where they differ from [`ServiceView`]'s own
//! schema (`Service`, the list and detail row): the variant list's rows lack `hierarchyRole`
//! and `parentId`, a children candidate has `isSelected` too. Both are cut from `Service`'s
//! schema, so that a field is described once; and the closed sets of a row.

use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{Object, ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::hierarchy::services::ServiceView;

/// A service's place in the hierarchy.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum HierarchyRole {
    /// May hold children (every service made before the hierarchy is one).
    Parent,
    Standalone,
    /// Lives inside at most one parent; never on the client home screen.
    Child,
}

/// A service's status.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum ServiceStatus {
    Active,
    Hidden,
}

/// [`ServiceView`]'s schema with its object changed by `edit`: both rows below are cut from
/// it, so that a field is described once.
fn service_schema_with(edit: impl FnOnce(&mut Object)) -> RefOr<Schema> {
    let mut schema = ServiceView::schema();
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        edit(object);
    }
    schema
}

/// A row of `GET /services/all/without-pagination` (the document's view of a
/// [`ServiceView::without_hierarchy`]).
#[derive(Serialize)]
pub struct ServiceVariant;

impl PartialSchema for ServiceVariant {
    fn schema() -> RefOr<Schema> {
        service_schema_with(|object| {
            for key in ["hierarchyRole", "parentId"] {
                object.properties.remove(key);
                object.required.retain(|name| name != key);
            }
            object.description = Some("A service without `hierarchyRole` and `parentId`.".into());
        })
    }
}

impl ToSchema for ServiceVariant {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        ServiceView::schemas(schemas);
    }
}

/// A row of the children candidates: a service (`hierarchyRole` always `child`) with
/// `isSelected`.
#[derive(Serialize)]
pub struct Candidate;

impl PartialSchema for Candidate {
    fn schema() -> RefOr<Schema> {
        service_schema_with(|object| {
            object.properties.insert(
                "isSelected".into(),
                ObjectBuilder::new()
                    .schema_type(Type::Boolean)
                    .description(Some(
                        "True when the row already belongs to the parent in the path.",
                    ))
                    .into(),
            );
            object.required.push("isSelected".into());
            object.description = Some("A children candidate.".into());
        })
    }
}

impl ToSchema for Candidate {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        ServiceView::schemas(schemas);
    }
}
