//! A phone as the routes read it from a query string: the login routes and the client lookup.

envelope::refusals! {
    /// Why a phone in a query is refused.
    pub enum PhoneRefusal in A {
        /// `contact_phone` missing or blank, where a route needs one.
        Missing => 400, "contact_phone is required";
    }
}

/// The phone as the accounts hold it. A `+` sent unencoded in a query string arrives as a
/// space, so a number of digits only gets its `+` back.
pub fn normalize_phone(raw: &str) -> String {
    let phone = domain::Phone::strip_whitespace(raw);
    if !phone.is_empty() && phone.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{phone}")
    } else {
        phone
    }
}

/// [`normalize_phone`] of a phone the route cannot do without.
pub fn required_phone(raw: Option<&str>) -> Result<String, PhoneRefusal> {
    let phone = normalize_phone(raw.unwrap_or_default());
    if phone.is_empty() {
        Err(PhoneRefusal::Missing)
    } else {
        Ok(phone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_plus_comes_back() {
        assert_eq!(normalize_phone(" 966500000001"), "+966500000001");
        assert_eq!(normalize_phone("+966 500 000 001"), "+966500000001");
        assert_eq!(normalize_phone("abc"), "abc");
        assert_eq!(normalize_phone(""), "");
    }

    #[test]
    fn a_blank_phone_is_missing() {
        assert_eq!(required_phone(None), Err(PhoneRefusal::Missing));
        assert_eq!(required_phone(Some("  ")), Err(PhoneRefusal::Missing));
        assert_eq!(
            required_phone(Some("966500000001")).as_deref(),
            Ok("+966500000001")
        );
    }
}
