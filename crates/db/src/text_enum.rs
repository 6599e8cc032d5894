//! A closed set of values that a `TEXT` column holds under a `CHECK (... IN (...))`: an enum
//! whose variants map to and from the column's words, written once. A word the code does not
//! know is an error when it is read (never a default), and each set is tested against its
//! column's `CHECK` ([`crate::testing::check_values`]).

/// Declares the enum, its `ALL`, `as_str`, `from_word` and `Display`, and its diesel mapping
/// to `Text`; with `in "table.column"`, the column whose `CHECK` lists its words (`COLUMN`);
/// with `as "Schema", "description"`, serde as the word and the documents' schema as an
/// enum of the words (the caller needs serde and utoipa):
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
        $vis:vis enum $name:ident $(in $column:literal)? $(as $schema:literal, $description:literal)? {
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
            pub const ALL: [$name; [$( stringify!($variant) ),+].len()] = [$( $name::$variant ),+];

            /// The word the column holds.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }

            /// The value of a word, or `None` for one the code does not know (never a default).
            pub fn from_word(word: &str) -> Option<Self> {
                match word {
                    $( $word => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        $(
            impl $name {
                /// The column this set belongs to (`table.column`), whose `CHECK` lists its words.
                pub const COLUMN: &'static str = $column;
            }
        )?

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
                Self::from_word(&word).ok_or_else(|| {
                    format!("{} {word:?}: a word the code does not know", stringify!($name)).into()
                })
            }
        }

        $(
            impl ::serde::Serialize for $name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serializer.serialize_str(self.as_str())
                }
            }

            impl<'de> ::serde::Deserialize<'de> for $name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let word = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                    Self::from_word(&word).ok_or_else(|| {
                        ::serde::de::Error::custom(format!("unknown {}: {word:?}", $schema))
                    })
                }
            }

            impl ::utoipa::PartialSchema for $name {
                fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::schema::Schema> {
                    ::utoipa::openapi::ObjectBuilder::new()
                        .schema_type(::utoipa::openapi::schema::Type::String)
                        .description(Some($description))
                        .enum_values(Some(Self::ALL.iter().map(|value| value.as_str())))
                        .into()
                }
            }

            impl ::utoipa::ToSchema for $name {
                fn name() -> ::std::borrow::Cow<'static, str> {
                    $schema.into()
                }
            }
        )?
    };
}
