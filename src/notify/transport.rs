//! Performing an [`Outgoing`]: HTTP requests through one reqwest client (rustls with the
//! `ring` provider), emails through lettre's SMTP transport (rustls too), commands through
//! `sh -c`. Every attempt has a deadline, so a slow or dead receiver costs at most
//! `timeout` and never holds up other channels. The result is data ([`Attempt`]), never a
//! panic.

use std::process::Stdio;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::{ContentType, MIME_VERSION_1_0};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::error_line::error_line;
use crate::notify::{Command, Email, HttpRequest, NotifyConfig, Outgoing};

/// The outcome of one attempt: a status code when the receiver answered, and an error text
/// ("" when delivered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attempt {
    pub code: Option<u16>,
    pub error: String,
}

impl Attempt {
    fn ok(code: Option<u16>) -> Attempt {
        Attempt {
            code,
            error: String::new(),
        }
    }

    fn failed(code: Option<u16>, error: impl Into<String>) -> Attempt {
        let error = error.into();
        Attempt {
            code,
            // Never empty: "" means success.
            error: if error.is_empty() {
                "failed".into()
            } else {
                error
            },
        }
    }

    pub(crate) fn is_ok(&self) -> bool {
        self.error.is_empty()
    }
}

/// Why the transports cannot be built from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
    #[error("--smtp-url is not usable: {0}")]
    SmtpUrl(String),
    #[error("--smtp-from {0:?} is not an email address")]
    SmtpFrom(String),
}

/// Everything needed to send, built once per worker.
pub(crate) struct Transports {
    http: reqwest::Client,
    smtp: Option<(AsyncSmtpTransport<Tokio1Executor>, Mailbox)>,
    allow_shell: bool,
    timeout: Duration,
}

impl Transports {
    pub(crate) fn new(config: &NotifyConfig) -> Result<Transports, TransportError> {
        crate::tls::install_provider();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| TransportError::Http(error_line(&e)))?;
        let smtp = match &config.smtp_url {
            None => None,
            Some(url) => {
                let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| TransportError::SmtpUrl(e.to_string()))?
                    .timeout(Some(config.timeout))
                    .build();
                let from = config
                    .smtp_from
                    .clone()
                    .unwrap_or_else(|| "overdue@localhost".to_string());
                let from: Mailbox = from
                    .parse()
                    .map_err(|_| TransportError::SmtpFrom(from.clone()))?;
                Some((transport, from))
            }
        };
        Ok(Transports {
            http,
            smtp,
            allow_shell: config.allow_shell,
            timeout: config.timeout,
        })
    }

    /// Sends one notification; never takes much longer than the configured timeout.
    pub(crate) async fn send(&self, out: &Outgoing) -> Attempt {
        let work = async {
            match out {
                Outgoing::Http(req) => self.http(req).await,
                Outgoing::Email(email) => self.email(email).await,
                Outgoing::Command(cmd) => self.command(cmd).await,
            }
        };
        // The clients have their own timeouts; this one bounds everything else (DNS, TLS).
        match tokio::time::timeout(self.timeout + Duration::from_secs(1), work).await {
            Ok(attempt) => attempt,
            Err(_) => Attempt::failed(None, format!("timed out after {:?}", self.timeout)),
        }
    }

    async fn http(&self, req: &HttpRequest) -> Attempt {
        let Ok(method) = reqwest::Method::from_bytes(req.method.as_bytes()) else {
            return Attempt::failed(None, format!("bad method {:?}", req.method));
        };
        let mut builder = self.http.request(method, &req.url);
        for (k, v) in &req.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if let Some(body) = &req.body {
            builder = builder.body(body.clone());
        }
        match builder.send().await {
            Err(e) => Attempt::failed(None, error_line(&e)),
            Ok(resp) => {
                let code = resp.status().as_u16();
                let accepted = match req.accept {
                    Some(list) => list.contains(&code),
                    None => resp.status().is_success(),
                };
                if accepted {
                    Attempt::ok(Some(code))
                } else {
                    Attempt::failed(Some(code), format!("Received status code {code}"))
                }
            }
        }
    }

    async fn email(&self, email: &Email) -> Attempt {
        let Some((transport, from)) = &self.smtp else {
            return Attempt::failed(
                None,
                "email is not configured (serve --smtp-url / OVERDUE_SMTP_URL)",
            );
        };
        let to: Mailbox = match email.to.parse() {
            Ok(to) => to,
            Err(e) => return Attempt::failed(None, format!("bad address {:?}: {e}", email.to)),
        };
        // lettre adds `Date` (now) and picks the transfer encoding; strict receivers also want
        // `MIME-Version` with a `Content-Type`.
        let message = lettre::Message::builder()
            .from(from.clone())
            .to(to)
            .subject(email.subject.clone())
            .message_id(Some(format!("<{}@{}>", email.id_left, from.email.domain())))
            .header(MIME_VERSION_1_0)
            .header(ContentType::TEXT_PLAIN)
            .body(email.text.clone());
        let message = match message {
            Ok(m) => m,
            Err(e) => return Attempt::failed(None, format!("cannot build the email: {e}")),
        };
        match transport.send(message).await {
            Ok(resp) => Attempt::ok(resp.code().to_string().parse().ok()),
            Err(e) => Attempt::failed(
                e.status().and_then(|c| c.to_string().parse().ok()),
                error_line(&e),
            ),
        }
    }

    async fn command(&self, cmd: &Command) -> Attempt {
        if !self.allow_shell {
            return Attempt::failed(
                None,
                "shell channels are not enabled (serve --allow-shell-channels)",
            );
        }
        let child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&cmd.command)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) => return Attempt::failed(None, format!("cannot run sh: {e}")),
        };
        match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Err(_) => Attempt::failed(None, format!("timed out after {:?}", self.timeout)),
            Ok(Err(e)) => Attempt::failed(None, format!("the command failed: {e}")),
            Ok(Ok(out)) => match out.status.code() {
                Some(0) => Attempt::ok(Some(0)),
                Some(code) => {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let stderr = stderr.trim();
                    let mut error = format!("Command returned exit code {code}");
                    if !stderr.is_empty() {
                        let tail: String = stderr.chars().take(200).collect();
                        error.push_str(&format!(": {tail}"));
                    }
                    Attempt::failed(u16::try_from(code).ok(), error)
                }
                None => Attempt::failed(None, "the command was killed by a signal"),
            },
        }
    }
}
