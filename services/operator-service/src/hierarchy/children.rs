//! The children check table of `PATCH /services/{id}/children`: the body's two id lists and
//! the first three checks, which need no database (the spec runs them before the parent
//! lookup); checks 4 to 6 run in `assignment::set_children`.

use std::fmt;

use serde_json::Value;

use crate::error::quoted;
use crate::hierarchy::lookup::ServiceRefusal;

/// One of the body's two id lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdList {
    Assign,
    Unassign,
}

impl IdList {
    /// In the order they are read.
    const BOTH: [IdList; 2] = [IdList::Assign, IdList::Unassign];

    fn key(self) -> &'static str {
        match self {
            IdList::Assign => "assignServiceIds",
            IdList::Unassign => "unassignServiceIds",
        }
    }
}

impl fmt::Display for IdList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

envelope::refusals! {
    /// Why a parent's children are not changed: the body's types, then the spec's check
    /// table (check 4, an unknown parent, is `ServiceRefusal::NotFound`).
    pub enum ChildrenRefusal in Operator {
        /// A list that is not an array (missing or null is `[]`).
        NotAnArray(list: IdList) => 400, "{list} must be an array";
        /// A list with an element that is not an integer.
        NotAnInteger(list: IdList) => 400, "each value in {list} must be an integer number";
        /// A list with an id twice.
        Repeated(list: IdList) => 400, "All {list}'s elements must be unique";
        /// Check 1: both lists empty.
        NothingToChange =>
            400, "At least one of assignServiceIds or unassignServiceIds must be provided";
        /// Check 2: an id in both lists.
        BothLists =>
            400, "assignServiceIds and unassignServiceIds must not contain the same service id";
        /// Check 3: the path id in either list.
        AssignsItself => 400, "A service cannot be assigned as a child of itself";
        /// Check 5: the path service is `standalone` or `child` (also the candidates' 400).
        NotAParent => 400, "Only a service with hierarchy_role = parent can have child services";
        /// Check 6: assign ids that do not exist, are not `child` or belong to another parent,
        /// comma-separated in the order sent.
        Unassignable(ids: String) =>
            400, "Some services cannot be assigned: they do not exist, are not child services, \
                  or already belong to another parent: {ids}";
    }
}

envelope::answer_set! {
    /// The 400 of the children route as the document lists it: the path id, then the checks of
    /// [`read`] and of `assignment::set_children`, in their order.
    pub SetChildrenBadRequest, envelope::Envelope::Operator, {
        "400" => {
            let types = IdList::BOTH.into_iter().flat_map(|list| {
                [
                    ChildrenRefusal::NotAnArray(list),
                    ChildrenRefusal::NotAnInteger(list),
                    ChildrenRefusal::Repeated(list),
                ]
            });
            format!(
                "`{}`: the path id is not an integer; body types, `{}` first (missing or null is `[]`): \
                 {}; check 1 `{}`; check 2 `{}`; check 3 `{}`; check 5 `{}`; check 6 `{}`",
                ServiceRefusal::BadId,
                IdList::Assign,
                quoted(types, ", "),
                ChildrenRefusal::NothingToChange,
                ChildrenRefusal::BothLists,
                ChildrenRefusal::AssignsItself,
                ChildrenRefusal::NotAParent,
                ChildrenRefusal::Unassignable("<comma-separated ids>".to_owned()),
            )
        },
    }
}

envelope::answer_set! {
    /// The 400 of the candidates route: the path id, then the parent check (after the 404).
    pub CandidatesBadRequest, envelope::Envelope::Operator, {
        "400" => format!(
            "`{}`: the path id is not an integer; or `{}`: the service is `standalone` or `child` \
             (after the 404)",
            ServiceRefusal::BadId,
            ChildrenRefusal::NotAParent,
        ),
    }
}

/// The ids of one list; missing or null is `[]`.
fn ids(body: &Value, list: IdList) -> Result<Vec<i64>, ChildrenRefusal> {
    let ids = match body.get(list.key()) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_i64().ok_or(ChildrenRefusal::NotAnInteger(list)))
            .collect::<Result<Vec<i64>, _>>()?,
        Some(_) => return Err(ChildrenRefusal::NotAnArray(list)),
    };
    let mut seen = std::collections::HashSet::new();
    if ids.iter().any(|id| !seen.insert(*id)) {
        return Err(ChildrenRefusal::Repeated(list));
    }
    Ok(ids)
}

/// The two id lists, after checks 1 to 3; unknown keys are dropped.
pub fn read(body: &Value, parent: i64) -> Result<(Vec<i64>, Vec<i64>), ChildrenRefusal> {
    let assign = ids(body, IdList::Assign)?;
    let unassign = ids(body, IdList::Unassign)?;
    if assign.is_empty() && unassign.is_empty() {
        return Err(ChildrenRefusal::NothingToChange);
    }
    if assign.iter().any(|id| unassign.contains(id)) {
        return Err(ChildrenRefusal::BothLists);
    }
    if assign.contains(&parent) || unassign.contains(&parent) {
        return Err(ChildrenRefusal::AssignsItself);
    }
    Ok((assign, unassign))
}

/// The body as the document shows it (never deserialized: [`read`] reads the raw JSON).
/// Unknown keys are dropped.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ChildrenBody {
    /// Unique integers; missing or null is `[]`.
    #[schema(rename = "assignServiceIds", example = json!([8]))]
    assign_service_ids: Option<Vec<i64>>,
    /// Unique integers; missing or null is `[]`. Ids that are not this parent's children
    /// are ignored.
    #[schema(rename = "unassignServiceIds", example = json!([6]))]
    unassign_service_ids: Option<Vec<i64>>,
}
