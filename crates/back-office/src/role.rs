//! The operator roles (the operator token's `role`, DESIGN.md "Tokens") and the sets of them
//! a back-office route admits: one type for the operator service, which checks the token,
//! and for the keepers, which check the role the operator service names again.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    SuperAdmin,
    Admin,
    MerchantManager,
    StoreManager,
    DataEntry,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::SuperAdmin,
        Role::Admin,
        Role::MerchantManager,
        Role::StoreManager,
        Role::DataEntry,
    ];

    /// As the token and the audit trails write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::SuperAdmin => "super_admin",
            Role::Admin => "admin",
            Role::MerchantManager => "merchant_manager",
            Role::StoreManager => "store_manager",
            Role::DataEntry => "data_entry",
        }
    }

    /// Writes, the children routes and the audit trails.
    pub fn is_admin(self) -> bool {
        Admits::Admins.admits(self)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The wire and database form of a closed set written by `as_str` and read by `from_word`:
/// serde as that string, the document's schema as an enum of those strings, and diesel's
/// `TEXT` (a word the code does not know fails the read).
macro_rules! text_type {
    ($type:ty, $schema:literal, $description:literal) => {
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let word = String::deserialize(deserializer)?;
                <$type>::from_word(&word).ok_or_else(|| {
                    serde::de::Error::custom(format!("unknown {}: {word:?}", $schema))
                })
            }
        }

        impl utoipa::PartialSchema for $type {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some($description))
                    .enum_values(Some(<$type>::ALL.iter().map(|value| value.as_str())))
                    .into()
            }
        }

        impl utoipa::ToSchema for $type {
            fn name() -> std::borrow::Cow<'static, str> {
                $schema.into()
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for $type {
            fn from_sql(
                bytes: <diesel::pg::Pg as diesel::backend::Backend>::RawValue<'_>,
            ) -> diesel::deserialize::Result<Self> {
                let word = <String as diesel::deserialize::FromSql<
                    diesel::sql_types::Text,
                    diesel::pg::Pg,
                >>::from_sql(bytes)?;
                <$type>::from_word(&word).ok_or_else(|| {
                    format!(
                        "the trail holds {} {word:?}, which the code does not know",
                        $schema
                    )
                    .into()
                })
            }
        }

        impl diesel::Queryable<diesel::sql_types::Text, diesel::pg::Pg> for $type {
            type Row = Self;
            fn build(row: Self) -> diesel::deserialize::Result<Self> {
                Ok(row)
            }
        }
    };
}
pub(crate) use text_type;

impl Role {
    /// The role a word names, or `None` ([`FromStr`] says which word).
    pub fn from_word(word: &str) -> Option<Self> {
        word.parse().ok()
    }
}

text_type!(
    Role,
    "OperatorRole",
    "An operator's role, as the token names it."
);

/// A role name no operator has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRole(s.to_owned()))
    }
}

/// Who may call a route (docs/decisions.md, "The loyalty back office"): reading the
/// programme is everyone's, changing it the admins', moving points and handling vouchers
/// `super_admin`'s alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admits {
    /// All five roles.
    All,
    /// `super_admin` and `admin`.
    Admins,
    /// `super_admin` alone.
    SuperAdmin,
}

impl Admits {
    pub fn admits(self, role: Role) -> bool {
        match self {
            Admits::All => true,
            Admits::Admins => matches!(role, Role::SuperAdmin | Role::Admin),
            Admits::SuperAdmin => role == Role::SuperAdmin,
        }
    }

    /// The roles admitted, in [`Role::ALL`]'s order (an operation's security requirement).
    pub fn roles(self) -> impl Iterator<Item = Role> {
        Role::ALL.into_iter().filter(move |role| self.admits(*role))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_reads_back_as_written_and_nothing_else_is_one() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
        for other in ["", "SUPER_ADMIN", "super_admin ", "root"] {
            assert_eq!(other.parse::<Role>(), Err(UnknownRole(other.to_owned())));
        }
    }

    #[test]
    fn each_set_admits_its_roles() {
        let names = |admits: Admits| admits.roles().map(Role::as_str).collect::<Vec<_>>();
        assert_eq!(names(Admits::All).len(), 5);
        assert_eq!(names(Admits::Admins), ["super_admin", "admin"]);
        assert_eq!(names(Admits::SuperAdmin), ["super_admin"]);
    }
}
