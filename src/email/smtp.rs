//! The SMTP conversation of the inbound listener as a pure state machine: it takes command
//! lines and message lines (without their line ending) and answers with the reply to send.
//! No I/O, no clock: the listener (`email::listen`) owns the socket and the timeouts.
//!
//! Only what an email ping needs: HELO/EHLO, MAIL (with the SIZE parameter), RCPT, DATA, RSET,
//! NOOP, VRFY, HELP, QUIT. No relaying, no STARTTLS, no AUTH: every recipient must be a ping
//! address of our own domain (`email::address`).

use crate::email::address::{RecipientError, parse_recipient};
use crate::model::limits::{SMTP_MAX_ERRORS, SMTP_MAX_RECIPIENTS};
use crate::model::signal::Target;

/// One reply: a code and one or more text lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub code: u16,
    pub(crate) lines: Vec<String>,
}

impl Reply {
    pub(crate) fn new(code: u16, text: impl Into<String>) -> Reply {
        Reply {
            code,
            lines: vec![text.into()],
        }
    }

    /// The reply as sent: `250-first`, ..., `250 last`, each ended by CRLF.
    pub(crate) fn to_wire(&self) -> String {
        let mut out = String::new();
        let last = self.lines.len().saturating_sub(1);
        for (i, line) in self.lines.iter().enumerate() {
            let sep = if i == last { ' ' } else { '-' };
            out.push_str(&format!("{}{}{}\r\n", self.code, sep, line));
        }
        if self.lines.is_empty() {
            out.push_str(&format!("{}\r\n", self.code));
        }
        out
    }
}

/// What the listener does after a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Send the reply and read on.
    Reply(Reply),
    /// Send the reply and hang up.
    Close(Reply),
    /// The message is complete: record it, then send [`Session::delivered`]'s reply.
    Message(Envelope),
    /// A message line was taken in; nothing to send.
    Continue,
}

/// A received message: who sent it (the envelope sender), to which checks, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub(crate) from: String,
    pub(crate) recipients: Vec<Target>,
    pub(crate) data: Vec<u8>,
}

/// Settings of a session.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Our name in the greeting and the EHLO reply.
    pub(crate) hostname: String,
    /// The domain of ping addresses (`--ping-email-domain`).
    pub(crate) domain: String,
    /// Largest message, in bytes.
    pub max_message: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before HELO/EHLO.
    Connected,
    /// Greeted; no transaction.
    Ready,
    /// After MAIL FROM.
    Mail,
    /// Reading the message after DATA.
    Data,
}

/// One client's session.
#[derive(Debug)]
pub(crate) struct Session {
    settings: Settings,
    phase: Phase,
    from: String,
    recipients: Vec<Target>,
    data: Vec<u8>,
    /// The message outgrew the limit; the rest is read and dropped, then answered 552.
    oversize: bool,
    errors: u32,
}

fn ok() -> Reply {
    Reply::new(250, "2.0.0 OK")
}

fn bad_sequence(text: &str) -> Reply {
    Reply::new(503, format!("5.5.1 {text}"))
}

/// The address inside `<...>` after `FROM:`/`TO:` (case-insensitive), and the parameters.
fn path_and_params<'a>(arg: &'a str, keyword: &str) -> Option<(&'a str, &'a str)> {
    let head = arg.get(..keyword.len())?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = arg[keyword.len()..].trim_start();
    let rest = rest.strip_prefix('<')?;
    let (path, params) = rest.split_once('>')?;
    Some((path, params.trim()))
}

impl Session {
    pub(crate) fn new(settings: Settings) -> Session {
        Session {
            settings,
            phase: Phase::Connected,
            from: String::new(),
            recipients: Vec::new(),
            data: Vec::new(),
            oversize: false,
            errors: 0,
        }
    }

    /// The greeting sent when a client connects.
    pub(crate) fn greeting(&self) -> Reply {
        Reply::new(220, format!("{} ESMTP overdue", self.settings.hostname))
    }

    /// Whether the next line belongs to a message (after `354`).
    pub(crate) fn in_data(&self) -> bool {
        self.phase == Phase::Data
    }

    fn reset(&mut self) {
        self.from.clear();
        self.recipients.clear();
        self.data = Vec::new();
        self.oversize = false;
        if self.phase != Phase::Connected {
            self.phase = Phase::Ready;
        }
    }

    /// A client error; too many of them end the session.
    fn error(&mut self, reply: Reply) -> Step {
        self.errors += 1;
        if self.errors >= SMTP_MAX_ERRORS {
            return Step::Close(Reply::new(421, "4.7.0 Too many errors, closing connection"));
        }
        Step::Reply(reply)
    }

    /// A command line longer than the listener reads.
    pub(crate) fn line_too_long(&mut self) -> Step {
        self.error(Reply::new(500, "5.5.2 Line too long"))
    }

    /// One command line, without its line ending.
    pub(crate) fn command(&mut self, line: &[u8]) -> Step {
        let Ok(line) = std::str::from_utf8(line) else {
            return self.error(Reply::new(500, "5.5.2 Syntax error"));
        };
        let (verb, arg) = match line.split_once(' ') {
            Some((v, a)) => (v, a.trim()),
            None => (line.trim(), ""),
        };
        match verb.to_ascii_uppercase().as_str() {
            "HELO" | "EHLO" if arg.is_empty() => {
                self.error(Reply::new(501, "5.5.4 Syntax: HELO/EHLO hostname"))
            }
            "HELO" => {
                self.phase = Phase::Ready;
                self.reset();
                Step::Reply(Reply::new(250, self.settings.hostname.clone()))
            }
            "EHLO" => {
                self.phase = Phase::Ready;
                self.reset();
                Step::Reply(Reply {
                    code: 250,
                    lines: vec![
                        self.settings.hostname.clone(),
                        format!("SIZE {}", self.settings.max_message),
                        "8BITMIME".into(),
                        "ENHANCEDSTATUSCODES".into(),
                    ],
                })
            }
            "MAIL" => self.mail(arg),
            "RCPT" => self.rcpt(arg),
            "DATA" => match self.phase {
                Phase::Mail if !self.recipients.is_empty() => {
                    self.phase = Phase::Data;
                    Step::Reply(Reply::new(354, "End data with <CR><LF>.<CR><LF>"))
                }
                Phase::Mail => self.error(bad_sequence("No valid recipients")),
                _ => self.error(bad_sequence("Error: need RCPT command")),
            },
            "RSET" => {
                self.reset();
                Step::Reply(ok())
            }
            "NOOP" => Step::Reply(ok()),
            "VRFY" => Step::Reply(Reply::new(
                252,
                "2.0.0 Cannot VRFY user, but will accept message",
            )),
            "HELP" => Step::Reply(Reply::new(
                214,
                "2.0.0 HELO EHLO MAIL RCPT DATA RSET NOOP VRFY QUIT",
            )),
            "QUIT" => Step::Close(Reply::new(221, "2.0.0 Bye")),
            "STARTTLS" | "AUTH" | "BDAT" | "EXPN" | "TURN" => {
                self.error(Reply::new(502, "5.5.1 Command not implemented"))
            }
            _ => self.error(Reply::new(500, "5.5.1 Command not recognized")),
        }
    }

    fn mail(&mut self, arg: &str) -> Step {
        match self.phase {
            Phase::Connected => return self.error(bad_sequence("Error: send HELO first")),
            Phase::Mail => return self.error(bad_sequence("Error: nested MAIL command")),
            _ => {}
        }
        let Some((path, params)) = path_and_params(arg, "FROM:") else {
            return self.error(Reply::new(501, "5.5.4 Syntax: MAIL FROM:<address>"));
        };
        for param in params.split_ascii_whitespace() {
            let (name, value) = param.split_once('=').unwrap_or((param, ""));
            if name.eq_ignore_ascii_case("SIZE") {
                match value.parse::<u64>() {
                    Ok(n) if n > self.settings.max_message as u64 => {
                        return Step::Reply(Reply::new(
                            552,
                            "5.3.4 Message size exceeds fixed maximum message size",
                        ));
                    }
                    Ok(_) => {}
                    Err(_) => {
                        return self.error(Reply::new(501, "5.5.4 Syntax: SIZE=<number>"));
                    }
                }
            }
        }
        self.from = path.to_string();
        self.phase = Phase::Mail;
        Step::Reply(ok())
    }

    fn rcpt(&mut self, arg: &str) -> Step {
        if self.phase != Phase::Mail {
            return self.error(bad_sequence("Error: need MAIL command"));
        }
        let Some((path, _)) = path_and_params(arg, "TO:") else {
            return self.error(Reply::new(501, "5.5.4 Syntax: RCPT TO:<address>"));
        };
        if self.recipients.len() >= SMTP_MAX_RECIPIENTS {
            return Step::Reply(Reply::new(452, "4.5.3 Too many recipients"));
        }
        match parse_recipient(path, &self.settings.domain) {
            Ok(target) => {
                self.recipients.push(target);
                Step::Reply(ok())
            }
            Err(RecipientError::Domain) => self.error(Reply::new(550, "5.1.1 Recipient rejected")),
            Err(RecipientError::Mailbox) => self.error(Reply::new(550, "5.1.1 Invalid mailbox")),
        }
    }

    /// One line of the message, without its line ending; `.` alone ends the message.
    pub(crate) fn data_line(&mut self, line: &[u8]) -> Step {
        if line == b"." {
            if self.oversize {
                self.reset();
                return Step::Reply(Reply::new(
                    552,
                    "5.3.4 Message size exceeds fixed maximum message size",
                ));
            }
            let envelope = Envelope {
                from: std::mem::take(&mut self.from),
                recipients: std::mem::take(&mut self.recipients),
                data: std::mem::take(&mut self.data),
            };
            self.reset();
            return Step::Message(envelope);
        }
        // Dot-stuffing (RFC 5321 §4.5.2): a leading dot was doubled by the sender.
        let line = line.strip_prefix(b".").unwrap_or(line);
        if self.data.len() + line.len() + 2 > self.settings.max_message {
            self.data_overflow();
        } else if !self.oversize {
            self.data.extend_from_slice(line);
            self.data.extend_from_slice(b"\r\n");
        }
        Step::Continue
    }

    /// A message line too long to read: the message is over the limit.
    pub(crate) fn data_overflow(&mut self) {
        self.oversize = true;
        self.data = Vec::new();
    }

    /// The reply once a message has been recorded (`recorded` false: try again later).
    pub(crate) fn delivered(recorded: bool) -> Reply {
        if recorded {
            Reply::new(250, "2.0.0 OK")
        } else {
            Reply::new(451, "4.3.0 Temporary failure, try again later")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    const U: &str = "cf204185-012a-4bc0-8efb-5dc6ccf91181";

    fn session() -> Session {
        Session::new(Settings {
            hostname: "mx.test".into(),
            domain: "hc.example.com".into(),
            max_message: 100,
        })
    }

    fn code(step: Step) -> u16 {
        match step {
            Step::Reply(r) | Step::Close(r) => r.code,
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn a_whole_conversation() {
        let mut s = session();
        assert_eq!(s.greeting().to_wire(), "220 mx.test ESMTP overdue\r\n");
        match s.command(b"EHLO client") {
            Step::Reply(r) => assert_eq!(
                r.to_wire(),
                "250-mx.test\r\n250-SIZE 100\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            code(s.command(b"MAIL FROM:<job@example.org> BODY=8BITMIME")),
            250
        );
        assert_eq!(
            code(s.command(format!("RCPT TO:<{U}@hc.example.com>").as_bytes())),
            250
        );
        assert_eq!(
            code(s.command(b"rcpt to: <abcdefghijklmnopqrstuv+db-backup@HC.example.com>")),
            250
        );
        assert_eq!(code(s.command(b"DATA")), 354);
        assert!(s.in_data());
        assert_eq!(s.data_line(b"Subject: hi"), Step::Continue);
        assert_eq!(s.data_line(b""), Step::Continue);
        assert_eq!(s.data_line(b"..leading dot"), Step::Continue);
        match s.data_line(b".") {
            Step::Message(e) => {
                assert_eq!(e.from, "job@example.org");
                assert_eq!(
                    e.recipients,
                    vec![
                        Target::Uuid(Uuid::parse_str(U).unwrap()),
                        Target::Slug {
                            ping_key: "abcdefghijklmnopqrstuv".into(),
                            slug: "db-backup".into()
                        }
                    ]
                );
                assert_eq!(e.data, b"Subject: hi\r\n\r\n.leading dot\r\n");
            }
            other => panic!("{other:?}"),
        }
        assert!(!s.in_data());
        // A second transaction in the same session.
        assert_eq!(code(s.command(b"MAIL FROM:<>")), 250);
        assert_eq!(code(s.command(b"QUIT")), 221);
    }

    #[test]
    fn recipients_are_checked_like_the_reference() {
        let mut s = session();
        s.command(b"HELO x");
        s.command(b"MAIL FROM:<a@b>");
        let reply = |s: &mut Session, rcpt: &str| match s.command(rcpt.as_bytes()) {
            Step::Reply(r) => r.to_wire(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reply(&mut s, &format!("RCPT TO:<{U}@elsewhere.com>")),
            "550 5.1.1 Recipient rejected\r\n"
        );
        assert_eq!(
            reply(&mut s, "RCPT TO:<nobody@hc.example.com>"),
            "550 5.1.1 Invalid mailbox\r\n"
        );
        assert_eq!(code(s.command(b"DATA")), 503);
    }

    #[test]
    fn sequence_errors() {
        let mut s = session();
        assert_eq!(code(s.command(b"MAIL FROM:<a@b>")), 503);
        assert_eq!(code(s.command(b"HELO")), 501);
        s.command(b"HELO x");
        assert_eq!(
            code(s.command(format!("RCPT TO:<{U}@hc.example.com>").as_bytes())),
            503
        );
        assert_eq!(code(s.command(b"DATA")), 503);
        assert_eq!(code(s.command(b"MAIL FROM:a@b")), 501);
        assert_eq!(code(s.command(b"STARTTLS")), 502);
        assert_eq!(code(s.command(b"WHATEVER")), 500);
        assert_eq!(code(s.command(b"\xff\xfe")), 500);
        assert_eq!(code(s.command(b"NOOP")), 250);
        assert_eq!(code(s.command(b"RSET")), 250);
    }

    #[test]
    fn sizes_over_the_limit_get_552() {
        let mut s = session();
        s.command(b"EHLO x");
        assert_eq!(code(s.command(b"MAIL FROM:<a@b> SIZE=101")), 552);
        assert_eq!(code(s.command(b"MAIL FROM:<a@b> SIZE=100")), 250);
        s.command(format!("RCPT TO:<{U}@hc.example.com>").as_bytes());
        s.command(b"DATA");
        for _ in 0..20 {
            assert_eq!(s.data_line(b"0123456789"), Step::Continue);
        }
        assert_eq!(code(s.data_line(b".")), 552);
        // The session goes on after a refused message.
        assert_eq!(code(s.command(b"MAIL FROM:<a@b>")), 250);
    }

    #[test]
    fn too_many_errors_close_the_session() {
        let mut s = session();
        for _ in 1..SMTP_MAX_ERRORS {
            assert!(matches!(s.command(b"BOGUS"), Step::Reply(_)));
        }
        assert!(matches!(s.command(b"BOGUS"), Step::Close(r) if r.code == 421));
    }

    #[test]
    fn too_many_recipients() {
        let mut s = session();
        s.command(b"HELO x");
        s.command(b"MAIL FROM:<a@b>");
        let rcpt = format!("RCPT TO:<{U}@hc.example.com>");
        for _ in 0..SMTP_MAX_RECIPIENTS {
            assert_eq!(code(s.command(rcpt.as_bytes())), 250);
        }
        assert_eq!(code(s.command(rcpt.as_bytes())), 452);
    }
}
