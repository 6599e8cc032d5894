//! The operator roles (the operator token's `role`, DESIGN.md "Tokens") and the sets of them
//! a back-office route admits: one type for the operator service, which checks the token,
//! and for the keepers, which check the role the operator service names again.

use std::str::FromStr;

db::text_enum! {
    /// An operator's role, as the token names it.
    pub enum Role as "OperatorRole", "An operator's role, as the token names it." {
        SuperAdmin => "super_admin",
        Admin => "admin",
        MerchantManager => "merchant_manager",
        StoreManager => "store_manager",
        DataEntry => "data_entry",
    }
}

impl Role {
    /// Writes, the children routes and the audit trails.
    pub fn is_admin(self) -> bool {
        Admits::Admins.admits(self)
    }
}

/// A role name no operator has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::from_word(s).ok_or_else(|| UnknownRole(s.to_owned()))
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
