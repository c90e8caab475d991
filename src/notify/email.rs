//! Email (reference-behavior §8.3): the subject `DOWN | <name>` and the plain-text body of
//! [`Message::long_text`], sent through the server-wide SMTP settings (`transport.rs`). Each
//! alert has its own `Message-ID` (large providers refuse mail without one), the same on every
//! retry so that a receiver can drop a duplicate.

use crate::notify::message::Message;
use crate::notify::{Email, Notifier, NotifyError, Outgoing};

pub(crate) struct EmailNotifier {
    to: String,
}

impl EmailNotifier {
    pub(crate) fn new(address: &str) -> Result<EmailNotifier, NotifyError> {
        let address = address.trim();
        if address.parse::<lettre::Address>().is_err() {
            return Err(NotifyError::config(
                "email",
                format!("{address:?} is not an email address"),
            ));
        }
        Ok(EmailNotifier {
            to: address.to_string(),
        })
    }
}

impl Notifier for EmailNotifier {
    fn prepare(&self, msg: &Message) -> Result<Outgoing, NotifyError> {
        Ok(Outgoing::Email(Email {
            to: self.to.clone(),
            subject: msg.subject(),
            text: msg.long_text(),
            id_left: format!(
                "{}.{}.{}.overdue",
                msg.check.simple(),
                msg.at.as_microsecond(),
                msg.id
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::message::Event;
    use crate::notify::message::tests::sample;

    #[test]
    fn subject_and_body() {
        let n = EmailNotifier::new("ops@example.org").expect("address");
        let Outgoing::Email(e) = n.prepare(&sample(Event::Down)).expect("email") else {
            panic!("email")
        };
        assert_eq!(e.to, "ops@example.org");
        assert_eq!(e.subject, "DOWN | Backups");
        assert!(e.text.starts_with("The check \"Backups\" has gone down.\n"));
        assert!(EmailNotifier::new("not an address").is_err());
        assert_eq!(
            e.id_left,
            "0193a3b4000040008000000000000001.1774917120000000.42.overdue"
        );
    }
}
