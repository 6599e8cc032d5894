//! Which page of a back-office list a keeper answers: the trails and the gift-code batches,
//! newest first. The operator service reads the panel's `page` and `limit` by its own rules
//! (`operator_service::query::Page`: never refused, falling back to 1 and 10, `limit` at most
//! 100) and sends them on as integers; a keeper reads them the same way again.

use diesel::QueryResult;
use diesel::QueryableByName;
use diesel::pg::Pg;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Deserialize;

/// The largest page size.
pub const MAX_LIMIT: i64 = 100;
/// The last page read.
pub const MAX_PAGE: i64 = 1_000_000;

/// `page` and `limit` as a keeper's route reads them.
#[derive(Debug, Clone, Copy, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// From 1 (default 1).
    page: Option<i64>,
    /// 1 to 100 (default 10).
    limit: Option<i64>,
}

impl Paging {
    /// From a query's pairs; the first of each key counts, an unreadable value is its
    /// default (never refused: the operator service sends integers).
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let number = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.parse::<i64>().ok())
        };
        Self {
            page: number("page"),
            limit: number("limit"),
        }
    }

    pub fn new(page: i64, limit: i64) -> Self {
        Self {
            page: Some(page),
            limit: Some(limit),
        }
    }

    pub fn page(&self) -> i64 {
        self.page.filter(|p| *p >= 1).unwrap_or(1).min(MAX_PAGE)
    }

    pub fn limit(&self) -> i64 {
        self.limit.filter(|l| *l >= 1).unwrap_or(10).min(MAX_LIMIT)
    }

    /// The rows before the page.
    pub fn offset(&self) -> i64 {
        (self.page() - 1) * self.limit()
    }

    /// The query a relay sends: `?page=P&limit=L`.
    pub fn query(&self) -> String {
        format!("?page={}&limit={}", self.page(), self.limit())
    }

    /// The page's metadata for `total` rows.
    pub fn meta(&self, total: i64) -> domain::PageMeta {
        domain::PageMeta::new(self.page(), self.limit(), total)
    }

    /// This page of a trail, `columns` of `table` newest first (by `created_at`, then `id`),
    /// and the metadata of all its rows.
    pub async fn newest_first<T>(
        &self,
        conn: &mut AsyncPgConnection,
        columns: &str,
        table: &str,
    ) -> QueryResult<(Vec<T>, domain::PageMeta)>
    where
        T: QueryableByName<Pg> + Send + 'static,
    {
        let rows = diesel::sql_query(format!(
            "SELECT {columns} FROM {table} ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2"
        ))
        .bind::<BigInt, _>(self.limit())
        .bind::<BigInt, _>(self.offset())
        .load(conn)
        .await?;
        let total: Count = diesel::sql_query(format!("SELECT count(*) AS n FROM {table}"))
            .get_result(conn)
            .await?;
        Ok((rows, self.meta(total.n)))
    }
}

/// A row count.
#[derive(QueryableByName)]
pub struct Count {
    #[diesel(sql_type = BigInt)]
    pub n: i64,
}

/// `page` and `limit` as an operator list documents them (the operator service reads them by
/// its own rules, `operator_service::query::Page`).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageParams {
    /// Default 1; unreadable or below 1 is 1; at most 1 000 000.
    page: Option<i64>,
    /// Default 10; unreadable or below 1 is 10; at most 100.
    limit: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_falls_back_and_is_capped() {
        let read = |page, limit| {
            let paging = Paging { page, limit };
            (paging.page(), paging.limit(), paging.offset())
        };
        assert_eq!(read(None, None), (1, 10, 0));
        assert_eq!(read(Some(0), Some(0)), (1, 10, 0));
        assert_eq!(read(Some(3), Some(500)), (3, 100, 200));
        assert_eq!(
            read(Some(i64::MAX), Some(-1)),
            (MAX_PAGE, 10, (MAX_PAGE - 1) * 10)
        );
        assert_eq!(Paging::new(2, 5).query(), "?page=2&limit=5");
        let pairs = |raw: &[(&str, &str)]| {
            raw.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<Vec<_>>()
        };
        let read = Paging::from_pairs(&pairs(&[("limit", "x"), ("page", "4"), ("page", "9")]));
        assert_eq!((read.page(), read.limit()), (4, 10));
    }
}
