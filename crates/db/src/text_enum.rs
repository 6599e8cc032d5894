//! A closed set of values that a `TEXT` column holds under a `CHECK (... IN (...))`: an enum
//! whose variants map to and from the column's words, written once. A word the code does not
//! know is an error when it is read (never a default), and each set is tested against its
//! column's `CHECK` ([`crate::testing::check_values`]).

/// Declares the enum, its `ALL`, `as_str` and `from_db`, and its diesel mapping to `Text`:
///
/// ```ignore
/// db::text_enum! {
///     /// Where an order stands.
///     pub enum Status in "point_orders.status" {
///         /// Payable.
///         Open => "initial_order",
///         Successful => "successful",
///     }
/// }
/// ```
#[macro_export]
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident in $column:literal {
            $( $(#[$variant_meta:meta])* $variant:ident => $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash,
            ::diesel::expression::AsExpression, ::diesel::deserialize::FromSqlRow,
        )]
        #[diesel(sql_type = ::diesel::sql_types::Text)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$( $name::$variant ),+];
            /// The column this set belongs to (`table.column`).
            pub const COLUMN: &'static str = $column;

            /// The word the column holds.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }

            /// The value of a word the column holds, or `None` for one the code does not know.
            pub fn from_db(word: &str) -> Option<Self> {
                match word {
                    $( $word => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::diesel::serialize::ToSql<::diesel::sql_types::Text, ::diesel::pg::Pg> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut ::diesel::serialize::Output<'b, '_, ::diesel::pg::Pg>,
            ) -> ::diesel::serialize::Result {
                <str as ::diesel::serialize::ToSql<::diesel::sql_types::Text, ::diesel::pg::Pg>>::to_sql(
                    self.as_str(),
                    out,
                )
            }
        }

        impl ::diesel::deserialize::FromSql<::diesel::sql_types::Text, ::diesel::pg::Pg> for $name {
            fn from_sql(
                bytes: <::diesel::pg::Pg as ::diesel::backend::Backend>::RawValue<'_>,
            ) -> ::diesel::deserialize::Result<Self> {
                let word = <String as ::diesel::deserialize::FromSql<
                    ::diesel::sql_types::Text,
                    ::diesel::pg::Pg,
                >>::from_sql(bytes)?;
                Self::from_db(&word).ok_or_else(|| {
                    format!("{} holds {word:?}, which the code does not know", $column).into()
                })
            }
        }
    };
}
