//! What keyword filters read from an email (reference-behavior §4.6): the Subject, and the
//! first text/plain part and first HTML part of the body, the HTML turned into text. MIME
//! parsing is mail-parser's; a message it cannot parse has an empty subject and body.

use mail_parser::decoders::html::html_to_text;
use mail_parser::{MessageParser, PartType};

use crate::model::classify::EmailText;

/// The subject and body text of a raw RFC 5322 message.
pub(crate) fn email_text(raw: &[u8]) -> EmailText {
    let Some(message) = MessageParser::default().parse(raw) else {
        return EmailText::default();
    };
    let subject = message.subject().unwrap_or_default().to_string();
    let part = |id: &u32| message.parts.get(*id as usize).map(|p| &p.body);
    let plain = message.text_body.iter().find_map(|id| match part(id) {
        Some(PartType::Text(text)) => Some(text.to_string()),
        _ => None,
    });
    let html = message.html_body.iter().find_map(|id| match part(id) {
        Some(PartType::Html(html)) => Some(html_to_text(html)),
        _ => None,
    });
    let body = [plain, html]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n");
    EmailText { subject, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_message() {
        let t = email_text(b"Subject: Backup OK\r\nFrom: a@b\r\n\r\nAll went well.\r\n");
        assert_eq!(t.subject, "Backup OK");
        assert_eq!(t.body.trim_end(), "All went well.");
    }

    #[test]
    fn multipart_alternative_reads_both_parts() {
        let raw = b"Subject: =?utf-8?q?R=C3=A9sultat?=\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/alternative; boundary=\"XX\"\r\n\
\r\n\
--XX\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
\r\n\
plain says fine\r\n\
--XX\r\n\
Content-Type: text/html; charset=utf-8\r\n\
\r\n\
<html><body><p>html says <b>ERROR</b></p></body></html>\r\n\
--XX--\r\n";
        let t = email_text(raw);
        assert_eq!(t.subject, "Résultat");
        assert!(t.body.contains("plain says fine"), "{:?}", t.body);
        assert!(t.body.contains("html says ERROR"), "{:?}", t.body);
        assert!(!t.body.contains("<b>"), "{:?}", t.body);
    }

    #[test]
    fn html_only_and_base64() {
        let raw = b"Subject: x\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: base64\r\n\r\nPGI+ZG9uZTwvYj4=\r\n";
        let t = email_text(raw);
        assert_eq!(t.body.trim(), "done");
    }

    #[test]
    fn garbage_does_not_panic() {
        for raw in [
            &b""[..],
            b"\xff\xfe\x00",
            b"Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n--",
            b"Subject: =?x?q?broken\r\n\r\n",
        ] {
            let _ = email_text(raw);
        }
    }
}
