//! Ping addresses (reference-behavior §4.6): `<uuid>@DOMAIN` or `<ping-key>+<slug>@DOMAIN`.
//! Only the form is checked here; whether the check exists is known when the message is
//! recorded (an unknown check is logged, not refused, as in the reference).

use uuid::Uuid;

use crate::model::signal::Target;

/// Why a recipient is refused (both answered 550).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecipientError {
    /// Not our domain: `550 5.1.1 Recipient rejected`.
    Domain,
    /// Our domain, but not a ping address: `550 5.1.1 Invalid mailbox`.
    Mailbox,
}

/// A version-4 UUID in its 8-4-4-4-12 form, hex in either case.
fn v4_uuid(s: &str) -> Option<Uuid> {
    let groups: Vec<&str> = s.split('-').collect();
    let lens_ok = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]);
    if !lens_ok
        || !groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return None;
    }
    let variant_ok = matches!(
        groups[3].as_bytes()[0].to_ascii_lowercase(),
        b'8' | b'9' | b'a' | b'b'
    );
    if !groups[2].starts_with('4') || !variant_ok {
        return None;
    }
    Uuid::parse_str(s).ok()
}

fn ping_key_and_slug(s: &str) -> Option<Target> {
    let (key, slug) = s.split_once('+')?;
    let key_ok = crate::model::project::is_ping_key(key);
    let slug_ok = !slug.is_empty()
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    (key_ok && slug_ok).then(|| Target::Slug {
        ping_key: key.to_string(),
        slug: slug.to_string(),
    })
}

/// The check an address names. Domains compare without regard to case (as DNS does).
pub(crate) fn parse_recipient(address: &str, domain: &str) -> Result<Target, RecipientError> {
    let (mailbox, their_domain) = address.rsplit_once('@').ok_or(RecipientError::Domain)?;
    if !their_domain.eq_ignore_ascii_case(domain) {
        return Err(RecipientError::Domain);
    }
    if let Some(uuid) = v4_uuid(mailbox) {
        return Ok(Target::Uuid(uuid));
    }
    ping_key_and_slug(mailbox).ok_or(RecipientError::Mailbox)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "hc.example.com";

    #[test]
    fn uuid_mailboxes() {
        let u = "cf204185-012a-4bc0-8efb-5dc6ccf91181";
        let want = Ok(Target::Uuid(Uuid::parse_str(u).unwrap()));
        assert_eq!(parse_recipient(&format!("{u}@{D}"), D), want);
        assert_eq!(
            parse_recipient(&format!("{}@{D}", u.to_uppercase()), D),
            want
        );
        // Not version 4, wrong variant, wrong shape.
        for bad in [
            "cf204185-012a-1bc0-8efb-5dc6ccf91181",
            "cf204185-012a-4bc0-cefb-5dc6ccf91181",
            "cf204185012a4bc08efb5dc6ccf91181",
            "cf204185-012a-4bc0-8efb-5dc6ccf9118g",
        ] {
            assert_eq!(
                parse_recipient(&format!("{bad}@{D}"), D),
                Err(RecipientError::Mailbox),
                "{bad}"
            );
        }
    }

    #[test]
    fn slug_mailboxes() {
        assert_eq!(
            parse_recipient(&format!("abcdefghij_klmnopqrs-v+db_backup-2@{D}"), D),
            Ok(Target::Slug {
                ping_key: "abcdefghij_klmnopqrs-v".into(),
                slug: "db_backup-2".into()
            })
        );
        for bad in [
            "abcdefghijklmnopqrstuv+Upper",
            "abcdefghijklmnopqrstuv+",
            "short+slug",
            "abcdefghijklmnopqrstuv",
            "abcdefghijklmnopqrstu!+slug",
        ] {
            assert_eq!(
                parse_recipient(&format!("{bad}@{D}"), D),
                Err(RecipientError::Mailbox),
                "{bad}"
            );
        }
    }

    #[test]
    fn other_domains_are_rejected() {
        let u = "cf204185-012a-4bc0-8efb-5dc6ccf91181";
        assert_eq!(
            parse_recipient(&format!("{u}@other.com"), D),
            Err(RecipientError::Domain)
        );
        assert_eq!(parse_recipient(u, D), Err(RecipientError::Domain));
        assert_eq!(
            parse_recipient(&format!("{u}@HC.Example.com"), D),
            Ok(Target::Uuid(Uuid::parse_str(u).unwrap()))
        );
    }
}
