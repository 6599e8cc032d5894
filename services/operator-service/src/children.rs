//! The body of `PATCH /services/{id}/children` and its first three checks, which need no
//! database (the spec runs them before the parent lookup).

use serde_json::Value;

pub const NOT_A_PARENT: &str =
    "Only a service with hierarchy_role = parent can have child services";

/// The 400 of the children route as the document lists it: the path id, then the checks of
/// [`read`] and of `services::set_children`, in their order.
pub fn set_children_400() -> String {
    format!("{}; {CHECKS}", crate::handlers::BAD_ID_400)
}

const CHECKS: &str = "body types, `assignServiceIds` first (missing or null is `[]`): `assignServiceIds must be an array`, `each value in assignServiceIds must be an integer number`, `All assignServiceIds's elements must be unique`, `unassignServiceIds must be an array`, `each value in unassignServiceIds must be an integer number`, `All unassignServiceIds's elements must be unique`; check 1 `At least one of assignServiceIds or unassignServiceIds must be provided`; check 2 `assignServiceIds and unassignServiceIds must not contain the same service id`; check 3 `A service cannot be assigned as a child of itself`; check 5 `Only a service with hierarchy_role = parent can have child services`; check 6 `Some services cannot be assigned: they do not exist, are not child services, or already belong to another parent: <comma-separated ids>`";

/// The two id lists; unknown keys are dropped.
pub fn read(body: &Value, parent: i64) -> Result<(Vec<i64>, Vec<i64>), String> {
    let list = |key: &str| -> Result<Vec<i64>, String> {
        let ids = match body.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_i64()
                        .ok_or_else(|| format!("each value in {key} must be an integer number"))
                })
                .collect::<Result<Vec<i64>, String>>()?,
            Some(_) => return Err(format!("{key} must be an array")),
        };
        let mut seen = std::collections::HashSet::new();
        if ids.iter().any(|id| !seen.insert(*id)) {
            return Err(format!("All {key}'s elements must be unique"));
        }
        Ok(ids)
    };
    let assign = list("assignServiceIds")?;
    let unassign = list("unassignServiceIds")?;
    // 1, 2, 3 of the check table.
    if assign.is_empty() && unassign.is_empty() {
        return Err(
            "At least one of assignServiceIds or unassignServiceIds must be provided".into(),
        );
    }
    if assign.iter().any(|id| unassign.contains(id)) {
        return Err(
            "assignServiceIds and unassignServiceIds must not contain the same service id".into(),
        );
    }
    if assign.contains(&parent) || unassign.contains(&parent) {
        return Err("A service cannot be assigned as a child of itself".into());
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
