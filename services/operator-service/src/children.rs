//! The body of `PATCH /services/{id}/children` and its first three checks, which need no
//! database (the spec runs them before the parent lookup).

use serde_json::Value;

pub const NOT_A_PARENT: &str =
    "Only a service with hierarchy_role = parent can have child services";

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
