//! Email pings (reference-behavior §4.6): an inbound SMTP listener in the service's process
//! (`serve --smtp-listen ADDR --ping-email-domain DOMAIN`). Each message to
//! `<uuid>@DOMAIN` or `<ping-key>+<slug>@DOMAIN` is recorded as a ping through the same
//! service path as HTTP pings, with scheme `email`, method `""` and user agent
//! `Email from <sender>`.
//!
//! The conversation is the pure state machine in `smtp`; this module is the thin tokio loop
//! around it: bounded line reads, idle and session timeouts, a cap on open connections.
//! A connection's failure (a rude client, garbage, a reset) ends that connection only.

pub(crate) mod address;
pub(crate) mod message;
pub(crate) mod smtp;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};

use crate::model::limits::{
    EMAIL_MAX_MESSAGE_BYTES, SMTP_IDLE_TIMEOUT_SECS, SMTP_MAX_COMMAND_BYTES, SMTP_MAX_CONNECTIONS,
    SMTP_SESSION_TIMEOUT_SECS, USER_AGENT_MAX_CHARS,
};
use crate::model::signal::{Signal, Target};
use crate::service::pings::PingRequest;
use crate::service::{Service, ServiceError};
use smtp::{Envelope, Reply, Session, Settings, Step};

/// How the listener behaves.
#[derive(Debug, Clone)]
pub struct InboundConfig {
    /// The domain of ping addresses.
    pub(crate) domain: String,
    /// Largest message accepted, in bytes.
    pub max_message: usize,
    /// Silence allowed between two lines.
    pub(crate) idle_timeout: Duration,
    /// Longest connection.
    pub(crate) session_timeout: Duration,
    /// Open connections allowed at once.
    pub max_connections: usize,
}

impl InboundConfig {
    /// The defaults of `model::limits` for `domain`.
    pub fn new(domain: impl Into<String>) -> InboundConfig {
        InboundConfig {
            domain: domain.into(),
            max_message: EMAIL_MAX_MESSAGE_BYTES,
            idle_timeout: Duration::from_secs(SMTP_IDLE_TIMEOUT_SECS),
            session_timeout: Duration::from_secs(SMTP_SESSION_TIMEOUT_SECS),
            max_connections: SMTP_MAX_CONNECTIONS,
        }
    }
}

/// Accepts connections until the task is aborted; aborting it also ends open connections.
pub async fn serve(
    listener: TcpListener,
    service: Arc<Service>,
    config: InboundConfig,
    stop: impl std::future::Future<Output = ()>,
) {
    let config = Arc::new(config);
    let permits = Arc::new(Semaphore::new(config.max_connections));
    let mut connections = JoinSet::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => {
                // Open sessions end here; their senders retry (SMTP's 4xx rule).
                connections.shutdown().await;
                return;
            }
        };
        while connections.try_join_next().is_some() {}
        let (mut stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of file descriptors and the like: wait a moment rather than spin.
                tracing::warn!("smtp: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            connections.spawn(async move {
                let reply = Reply::new(421, "4.3.2 Too many connections, try again later");
                let _ = stream.write_all(reply.to_wire().as_bytes()).await;
            });
            continue;
        };
        let service = service.clone();
        let config = config.clone();
        connections.spawn(async move {
            if let Err(e) = connection(stream, peer, &service, &config).await {
                tracing::debug!("smtp: connection from {peer} ended: {e}");
            }
            drop(permit);
        });
    }
}

/// What reading one line gave.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line, without its CRLF or LF.
    Text(Vec<u8>),
    /// Longer than allowed; it was read to its end and dropped.
    TooLong,
    /// The client closed the connection.
    Eof,
}

/// Reads one line of at most `max` bytes without ever holding more than that in memory.
async fn read_line(reader: &mut (impl AsyncBufRead + Unpin), max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(Line::Eof);
        }
        let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let used = chunk.len();
        if !too_long && line.len() + used <= max + 2 {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line = Vec::new();
        }
        reader.consume(used);
        if found {
            break;
        }
    }
    if too_long {
        return Ok(Line::TooLong);
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Line::Text(line))
}

/// Sends one reply.
async fn send(writer: &mut (impl AsyncWriteExt + Unpin), reply: &Reply) -> std::io::Result<()> {
    writer.write_all(reply.to_wire().as_bytes()).await?;
    writer.flush().await
}

/// One client, from greeting to hang-up.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    service: &Service,
    config: &InboundConfig,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut session = Session::new(Settings {
        hostname: config.domain.clone(),
        domain: config.domain.clone(),
        max_message: config.max_message,
    });
    let session_end = Instant::now() + config.session_timeout;
    send(&mut write, &session.greeting()).await?;
    loop {
        let deadline = session_end.min(Instant::now() + config.idle_timeout);
        // A data line may be as long as the whole message; the state machine counts it.
        let max = if session.in_data() {
            config.max_message
        } else {
            SMTP_MAX_COMMAND_BYTES
        };
        let line = if let Ok(line) = timeout_at(deadline, read_line(&mut reader, max)).await {
            line?
        } else {
            let reply = Reply::new(421, "4.4.2 Timeout, closing connection");
            return send(&mut write, &reply).await;
        };
        let step = match line {
            Line::Eof => return Ok(()),
            Line::TooLong if session.in_data() => {
                session.data_overflow();
                Step::Continue
            }
            Line::TooLong => session.line_too_long(),
            Line::Text(text) if session.in_data() => session.data_line(&text),
            Line::Text(text) => session.command(&text),
        };
        match step {
            Step::Continue => {}
            Step::Reply(reply) => send(&mut write, &reply).await?,
            Step::Close(reply) => return send(&mut write, &reply).await,
            Step::Message(envelope) => {
                let recorded = record(service, peer, envelope).await;
                send(&mut write, &Session::delivered(recorded)).await?;
            }
        }
    }
}

fn describe(target: &Target) -> String {
    match target {
        Target::Uuid(u) => u.to_string(),
        Target::Slug { ping_key, slug } => format!("{ping_key}+{slug}"),
    }
}

/// Records the message as a ping of each recipient's check. False when a ping could not be
/// recorded for a reason that may pass (busy, shutting down, storage), so the sender retries;
/// unknown and ambiguous checks are only logged, as in the reference.
async fn record(service: &Service, peer: SocketAddr, envelope: Envelope) -> bool {
    let text = message::email_text(&envelope.data);
    let mut body = envelope.data;
    body.truncate(service.config().ping_body_limit);
    let body = bytes::Bytes::from(body);
    let ua: String = format!("Email from {}", envelope.from)
        .chars()
        .take(USER_AGENT_MAX_CHARS)
        .collect();
    let mut all_recorded = true;
    for target in envelope.recipients {
        let who = describe(&target);
        let request = PingRequest {
            target,
            create: false,
            signal: Signal::Success,
            method: String::new(),
            scheme: "email".into(),
            remote_addr: Some(peer.ip().to_string()),
            ua: ua.clone(),
            rid: None,
            body: body.clone(),
        };
        match service.record_email_ping(request, text.clone()).await {
            Ok(_) => {}
            Err(ServiceError::NotFound) => tracing::info!("smtp: check not found: {who}"),
            Err(ServiceError::AmbiguousSlug) => tracing::info!("smtp: ambiguous slug: {who}"),
            Err(e) => {
                tracing::warn!("smtp: ping to {who} not recorded: {e}");
                all_recorded = false;
            }
        }
    }
    all_recorded
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        // A tiny buffer makes lines span several reads.
        let mut reader = BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, max).await.expect("read");
            let end = line == Line::Eof;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_bounded_and_stripped() {
        let got = lines(b"HELO a\r\nNOOP\nxxxxxxxxxxxxxxxxxxx\r\nQUIT\r\n", 8).await;
        assert_eq!(
            got,
            vec![
                Line::Text(b"HELO a".to_vec()),
                Line::Text(b"NOOP".to_vec()),
                Line::TooLong,
                Line::Text(b"QUIT".to_vec()),
                Line::Eof,
            ]
        );
    }

    #[tokio::test]
    async fn an_unterminated_last_line_is_end_of_input() {
        assert_eq!(lines(b"QUI", 8).await, vec![Line::Eof]);
    }
}
