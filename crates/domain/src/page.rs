//! The metadata of a paginated list, the same wherever a service pages (the point history,
//! the operator lists).

use serde::Serialize;

/// `{totalItems, page, itemsPerPage, totalPages}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PageMeta {
    #[serde(rename = "totalItems")]
    pub total_items: i64,
    pub page: i64,
    #[serde(rename = "itemsPerPage")]
    pub items_per_page: i64,
    /// 0 for an empty list.
    #[serde(rename = "totalPages")]
    pub total_pages: i64,
}

impl PageMeta {
    /// Page `page` of `limit` items (`limit` at least 1) out of `total_items`.
    pub fn new(page: i64, limit: i64, total_items: i64) -> Self {
        Self {
            total_items,
            page,
            items_per_page: limit,
            total_pages: (total_items + limit - 1) / limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_page_counts_when_partly_filled() {
        assert_eq!(PageMeta::new(1, 10, 0).total_pages, 0);
        assert_eq!(PageMeta::new(1, 10, 10).total_pages, 1);
        assert_eq!(PageMeta::new(2, 10, 11).total_pages, 2);
    }
}
