//! Query strings of the list routes: `hierarchy_role` (repeated or comma-separated),
//! `status`, `search`/`name`, and `page`/`limit`, which are coerced, never refused.

use serde::Serialize;

envelope::refusals! {
    /// Why a list's query is refused (`page` and `limit` never are).
    pub enum QueryRefusal in Operator {
        /// A `hierarchy_role` value that is empty or not `parent`, `standalone` or `child`.
        UnknownRole => 400, "each value in hierarchy_role must be a valid enum value";
    }
}

pub const DEFAULT_LIMIT: i64 = 10;
pub const MAX_LIMIT: i64 = 100;

/// A raw query string's pairs, repeated keys kept (`hierarchy_role` needs them).
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn parse(raw: &str) -> Self {
        Self(
            url::form_urlencoded::parse(raw.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn page(&self) -> Page {
        Page::read(self.get("page"), self.get("limit"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub page: i64,
    pub limit: i64,
}

/// A page of a list: `{data, meta}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ListPage<T: Serialize> {
    pub data: Vec<T>,
    pub meta: PageMeta,
}

pub use domain::PageMeta;

impl Page {
    /// Garbage, zero or negative values fall back to page 1 and 10 per page; a limit is
    /// capped at 100 and a page at 1 000 000, so the offset is never negative or absurd.
    pub fn read(page: Option<&str>, limit: Option<&str>) -> Self {
        let number = |raw: Option<&str>| {
            raw.and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 1.0)
        };
        let page = number(page).map_or(1, |n| n.min(1_000_000.0) as i64);
        let limit = number(limit).map_or(DEFAULT_LIMIT, |n| n.min(MAX_LIMIT as f64) as i64);
        Self { page, limit }
    }

    pub fn offset(&self) -> i64 {
        (self.page - 1) * self.limit
    }

    pub fn meta(&self, total_items: i64) -> PageMeta {
        PageMeta::new(self.page, self.limit, total_items)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// `None`: all roles.
    pub roles: Option<Vec<String>>,
    pub status: Option<String>,
    pub search: Option<String>,
    pub page: Page,
}

impl ListQuery {
    /// Reads the raw query string (repeated keys need it).
    pub fn parse(raw: &str) -> Result<Self, QueryRefusal> {
        let params = Params::parse(raw);
        let mut roles: Option<Vec<String>> = None;
        for value in params
            .all("hierarchy_role")
            .chain(params.all("hierarchy_role[]"))
        {
            for role in value.split(',').map(str::trim) {
                if !matches!(role, "parent" | "standalone" | "child") {
                    return Err(QueryRefusal::UnknownRole);
                }
                roles.get_or_insert_with(Vec::new).push(role.to_owned());
            }
        }
        let search = params
            .get("search")
            .or_else(|| params.get("name"))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let status = params.get("status").map(str::to_owned);
        Ok(Self {
            roles,
            status,
            search,
            page: params.page(),
        })
    }
}

/// The filters of the two service lists, as the document shows them ([`ListQuery::parse`]
/// reads the raw query string).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ListFilters {
    /// `parent`, `standalone` or `child`: a repeated key (also `hierarchy_role[]`) or a
    /// comma-separated list; omitted lists all roles; an empty or other value is 400.
    #[param(value_type = Option<Vec<crate::hierarchy::service_schemas::HierarchyRole>>)]
    hierarchy_role: Option<Vec<String>>,
    /// Exact match (`active` or `hidden`).
    status: Option<String>,
    /// Case-insensitive match on `title` and `titleTranslated` (`%` and `_` match
    /// themselves); trimmed, empty means none.
    search: Option<String>,
    /// The same as `search`, used when `search` is absent.
    name: Option<String>,
}

/// A page of a list, as the document shows it ([`Page::read`] reads it; never refused).
pub use back_office::paging::PageParams;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_repeated_or_comma_separated() {
        let q = ListQuery::parse("hierarchy_role=parent&hierarchy_role=child,standalone").unwrap();
        assert_eq!(q.roles.unwrap(), ["parent", "child", "standalone"]);
        assert_eq!(ListQuery::parse("").unwrap().roles, None);
        assert_eq!(
            ListQuery::parse("hierarchy_role=parent,root").unwrap_err(),
            QueryRefusal::UnknownRole
        );
        assert_eq!(
            ListQuery::parse("hierarchy_role=").unwrap_err(),
            QueryRefusal::UnknownRole
        );
    }

    #[test]
    fn page_and_limit_are_coerced() {
        assert_eq!(
            Page::read(Some("abc"), Some("-5")),
            Page { page: 1, limit: 10 }
        );
        assert_eq!(
            Page::read(Some("3"), Some("1e9")),
            Page {
                page: 3,
                limit: 100
            }
        );
        assert_eq!(
            Page::read(Some("2.7"), Some("0")),
            Page { page: 2, limit: 10 }
        );
        assert_eq!(Page { page: 3, limit: 10 }.offset(), 20);
    }
}
