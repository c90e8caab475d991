//! The integrations page's "add" forms: one small form per channel kind, holding exactly the
//! settings that kind takes (`notify::setup::kind_flags`, the CLI's list), read back into the
//! same `ChannelFields` the CLI builds, so both accept and refuse the same input. Messages of
//! those rules name CLI flags (`--topic`); [`form_words`] names the form's fields instead.
//!
//! Shell channels are not offered: a command run on the server is the operator's to set up
//! (`overdue channel add --kind shell`), not something an API key's holder may do.

use crate::notify::KINDS;
use crate::notify::setup::{ChannelFields, kind_flags};
use crate::web::forms::Form;

/// Kinds the dashboard adds: every kind the CLI adds, but shell.
pub(crate) fn web_kinds() -> impl Iterator<Item = &'static str> {
    KINDS.iter().copied().filter(|k| *k != "shell")
}

/// How one field of an add form looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The form field's name (the flag with `_` for `-`).
    pub name: &'static str,
    pub label: &'static str,
    /// `text`, `url`, `email`, `password` (never filled back in), `textarea` or `method`.
    pub input: &'static str,
    pub hint: &'static str,
}

impl Field {
    pub(crate) fn secret(&self) -> bool {
        self.input == "password"
    }
}

/// The add form of one kind.
#[derive(Debug, Clone)]
pub(crate) struct KindForm {
    pub kind: &'static str,
    pub fields: Vec<Field>,
}

/// The words a field has in the form and in messages.
fn label(flag: &str) -> &'static str {
    match flag {
        "value" => "Email address",
        "url" => "URL",
        "url-down" => "URL when down",
        "url-up" => "URL when up",
        "method" => "Method",
        "body" => "Body",
        "body-down" => "Body when down",
        "body-up" => "Body when up",
        "header" => "Headers",
        "topic" => "Topic",
        "priority" => "Priority",
        "token" => "Token",
        "chat" => "Chat",
        "user" => "User key",
        "room" => "Room",
        "repeat" => "Repeat",
        "cmd-down" => "Command when down",
        "cmd-up" => "Command when up",
        _ => "",
    }
}

fn field(kind: &str, flag: &'static str) -> Field {
    let name = match flag {
        "url-down" => "url_down",
        "url-up" => "url_up",
        "body-down" => "body_down",
        "body-up" => "body_up",
        "cmd-down" => "cmd_down",
        "cmd-up" => "cmd_up",
        other => other,
    };
    let (input, hint) = match (kind, flag) {
        (_, "value") => ("email", ""),
        ("webhook", "url") => ("url", "Called when a check goes down and when it recovers."),
        ("webhook", "url-down" | "url-up") => ("url", "Instead of the URL above."),
        ("discord" | "slack" | "mattermost", "url") => ("url", "The incoming webhook's URL."),
        ("gotify", "url") => ("url", "The server's address."),
        (_, "url") => ("url", "Leave empty for the public service."),
        (_, "method") => ("method", ""),
        (_, "body" | "body-down" | "body-up") => (
            "textarea",
            "Placeholders such as $NAME and $STATUS are filled in; with a body, the default \
             method is POST.",
        ),
        (_, "header") => ("textarea", "One `Name: value` a line."),
        (_, "token" | "user") => ("password", ""),
        ("ntfy", "priority") => ("text", "1 to 5."),
        ("pushover", "priority") => ("text", "-2 to 1."),
        ("telegram", "chat") => ("text", "A chat id or @channel."),
        ("matrix", "room") => ("text", "!id:server or #alias:server."),
        _ => ("text", ""),
    };
    Field {
        name,
        label: label(flag),
        input,
        hint,
    }
}

/// The add form of every kind the dashboard adds.
pub(crate) fn kind_forms() -> Vec<KindForm> {
    web_kinds()
        .map(|kind| KindForm {
            kind,
            fields: kind_flags(kind).iter().map(|f| field(kind, f)).collect(),
        })
        .collect()
}

/// A form field: None when absent or blank (as a flag not given).
fn given(form: &Form, name: &str) -> Option<String> {
    let v = form.get(name)?;
    if v.trim().is_empty() {
        None
    } else if name.starts_with("body") {
        Some(v.to_string())
    } else {
        Some(v.trim().to_string())
    }
}

/// The channel settings an add form gives.
pub(crate) fn fields_of(form: &Form) -> ChannelFields {
    ChannelFields {
        kind: form.text("kind").to_string(),
        value: given(form, "value"),
        url: given(form, "url"),
        url_down: given(form, "url_down"),
        url_up: given(form, "url_up"),
        method: given(form, "method"),
        body: given(form, "body"),
        body_down: given(form, "body_down"),
        body_up: given(form, "body_up"),
        headers: form
            .get("header")
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        topic: given(form, "topic"),
        priority: given(form, "priority"),
        token: given(form, "token"),
        chat: given(form, "chat"),
        user: given(form, "user"),
        room: given(form, "room"),
        cmd_down: given(form, "cmd_down"),
        cmd_up: given(form, "cmd_up"),
    }
}

/// A message of the shared rules with the form's words for the CLI's flags: `--url` becomes
/// “URL”, `--kind ntfy` becomes `ntfy`, and the CLI's value names (`URL`, `ADDRESS`) go.
pub(crate) fn form_words(message: &str) -> String {
    let mut out = message
        .replace("--kind ", "")
        .replace(" ADDRESS", "")
        .replace("--url URL", "--url");
    let mut flags: Vec<&str> = KINDS
        .iter()
        .flat_map(|k| kind_flags(k).iter().copied())
        .chain(["repeat"])
        .collect();
    // Longest first: `--url-down` before `--url`.
    flags.sort_by_key(|f| std::cmp::Reverse(f.len()));
    flags.dedup();
    for flag in flags {
        out = out.replace(&format!("--{flag}"), &format!("“{}”", label(flag)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::setup::config_from_fields;

    #[test]
    fn every_kind_but_shell_has_a_form_with_exactly_its_settings() {
        let forms = kind_forms();
        assert_eq!(forms.len(), KINDS.len() - 1);
        assert!(forms.iter().all(|f| f.kind != "shell"));
        let ntfy = forms.iter().find(|f| f.kind == "ntfy").expect("ntfy");
        let names: Vec<&str> = ntfy.fields.iter().map(|f| f.name).collect();
        assert_eq!(names, ["url", "topic", "priority", "token"]);
        assert!(
            ntfy.fields[3].secret(),
            "tokens are typed into password fields"
        );
        let webhook = forms.iter().find(|f| f.kind == "webhook").expect("webhook");
        assert!(webhook.fields.iter().any(|f| f.name == "url_down"));
        assert!(
            forms
                .iter()
                .flat_map(|f| &f.fields)
                .all(|f| !f.label.is_empty())
        );
    }

    #[test]
    fn blank_fields_are_not_given_and_headers_are_lines() {
        let form = Form::parse(
            b"kind=webhook&url=+https%3A%2F%2Fh.example%2Fx+&url_down=&method=&header=X-A%3A+1%0D%0A%0D%0AX-B%3A+2&body=+%7B%7D",
        );
        let f = fields_of(&form);
        assert_eq!(f.kind, "webhook");
        assert_eq!(f.url.as_deref(), Some("https://h.example/x"));
        assert_eq!(f.url_down, None);
        assert_eq!(f.method, None);
        assert_eq!(f.headers, ["X-A: 1", "X-B: 2"]);
        assert_eq!(f.body.as_deref(), Some(" {}"), "bodies are kept as typed");
        assert!(config_from_fields(&f).is_ok());
    }

    #[test]
    fn the_rules_messages_use_the_forms_words() {
        let err = |query: &[u8]| {
            config_from_fields(&fields_of(&Form::parse(query)))
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            form_words(&err(b"kind=email")),
            "email needs “Email address”"
        );
        assert_eq!(
            form_words(&err(b"kind=webhook")),
            "webhook needs “URL” (or “URL when down”/“URL when up”)"
        );
        assert_eq!(
            form_words(&err(b"kind=webhook&url=http://h/&topic=t")),
            "webhook does not take “Topic” (it takes “URL”, “URL when down”, “URL when up”, \
             “Method”, “Body”, “Body when down”, “Body when up”, “Headers”)"
        );
        assert_eq!(
            form_words(&err(b"kind=ntfy")),
            "ntfy channel: needs “Topic”"
        );
        assert_eq!(
            form_words("--repeat \"x\" is not a duration"),
            "“Repeat” \"x\" is not a duration"
        );
    }
}
