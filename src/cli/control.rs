//! The control socket: while `serve` runs, admin commands reach it through a Unix socket in
//! the data directory (mode 0600) and run inside the service, so nothing requires stopping
//! it. One JSON line in (a [`Request`]: the protocol version and a command), one JSON line out
//! (a [`Reply`]); `cli::protocol` owns the wire format and its version. A request of another
//! version runs nothing and is answered with the service's version, and the client says which
//! binary and which service disagree and what to do.
//!
//! A service that holds the socket but does not answer (stopped with SIGSTOP, out of file
//! descriptors) must not make admin commands wait forever. While a command runs the service
//! writes a space every second ahead of its answer; JSON allows whitespace before a value, so
//! a client that reads one line and parses it (any earlier release) still understands the
//! answer. The client gives up after 10 s without a byte, and after an overall deadline that is
//! generous for `backup` and migration batches (`model::limits`).
//!
//! Import and export are sessions of several messages on one connection (`cli::session`), one
//! line each way per message, so a dump of any size passes in bounded parts.

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::time::{Instant, timeout, timeout_at};

use crate::cli::admin::{self, AdminCommand, AdminOutput, USAGE_EXIT};
use crate::cli::datadir;
use crate::cli::datadir::Place;
use crate::cli::protocol::{self, Command, Refusal, Reply, Request, UNVERSIONED, bad_request};
use crate::cli::session::{self, ExportSession, ImportSession};
use crate::model::limits::{
    CONTROL_ANSWER_SECS, CONTROL_KEEPALIVE_SECS, CONTROL_LONG_ANSWER_SECS, CONTROL_REQUEST_LIMIT,
    CONTROL_SILENCE_SECS,
};
use crate::service::{AccessDenied, PgError, StoreError};
use crate::service::{Clock, Service, ServiceConfig};

/// Bytes written or read per step on the client side: each step must make progress within
/// the silence limit.
const CHUNK: usize = 64 << 10;

/// Name of the socket inside the data directory.
pub(crate) const SOCKET_FILE: &str = "overdue.sock";

pub(crate) fn socket_path(data: &Path) -> PathBuf {
    data.join(SOCKET_FILE)
}

/// Binds the control socket, replacing a stale one left by a killed process. The caller must
/// hold the data file's lock, so no live service can own the old socket.
pub(crate) fn bind(data: &Path) -> std::io::Result<UnixListener> {
    let path = socket_path(data);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// The control socket as the daemon runs it.
pub(crate) struct ControlSocket;

impl crate::server::daemon::AdminSocket for ControlSocket {
    fn bind(&self, data: &Path) -> std::io::Result<UnixListener> {
        bind(data)
    }

    fn serve(
        &self,
        listener: UnixListener,
        service: Arc<Service>,
        stop: crate::server::daemon::Stop,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(serve(listener, service, stop))
    }

    fn remove(&self, data: &Path) {
        let _ = std::fs::remove_file(socket_path(data));
    }
}

/// How long admin commands under way may take to finish once the service stops.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Answers admin commands on `listener` until `stop` resolves; then waits a bounded time for
/// the commands under way (their clients wait for an answer).
pub(crate) async fn serve(
    listener: UnixListener,
    service: Arc<Service>,
    stop: impl std::future::Future<Output = ()>,
) {
    let mut running = tokio::task::JoinSet::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        while running.try_join_next().is_some() {}
        match accepted {
            Ok((stream, _)) => {
                let service = service.clone();
                running.spawn(async move {
                    if let Err(e) = answer(stream, &service).await {
                        tracing::warn!("control socket: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("control socket accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
    // A silent client must not hold the shutdown: commands get a bounded time to finish.
    let finished = async { while running.join_next().await.is_some() {} };
    if tokio::time::timeout(STOP_WAIT, finished).await.is_err() {
        tracing::warn!("control socket: stopping with commands still under way");
    }
    running.shutdown().await;
}

async fn answer(stream: UnixStream, service: &Service) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    let answer = if read_line(&mut reader, &mut line).await? {
        match protocol::read_request(&line) {
            Err(Refusal::Unversioned(output)) => {
                // The shape an earlier release's client reads.
                reply(&mut write, &output).await?;
                return write.shutdown().await;
            }
            Err(Refusal::Reply(refused)) => *refused,
            Ok(_) if client_gone(&mut reader).await => {
                tracing::warn!(
                    "control socket: the client gave up waiting before its command ran; \
                     not running it"
                );
                return Ok(());
            }
            Ok(command) => match command.into_admin() {
                Some(cmd) if session::opens_session(&cmd) => {
                    return run_session(cmd, reader, write, service).await;
                }
                Some(cmd) => with_keepalive(&write, admin::answer(service, cmd)).await,
                None => Reply::Output(AdminOutput::error(bad_request(
                    "a message of an import or export session came before the session",
                ))),
            },
        }
    } else {
        Reply::Output(too_large())
    };
    reply(&mut write, &answer).await?;
    write.shutdown().await
}

/// Reads one request line into `line`; false when it is longer than the socket takes.
async fn read_line(
    reader: &mut BufReader<OwnedReadHalf>,
    line: &mut String,
) -> std::io::Result<bool> {
    line.clear();
    (&mut *reader)
        .take(CONTROL_REQUEST_LIMIT)
        .read_line(line)
        .await?;
    Ok((line.len() as u64) < CONTROL_REQUEST_LIMIT || line.ends_with('\n'))
}

/// Writes one answer line.
async fn reply(write: &mut OwnedWriteHalf, answer: &impl Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    line.push(b'\n');
    write.write_all(&line).await
}

/// The next message of a session: None when the client closed it, sent something too large,
/// or stayed silent longer than a command may take (then it is gone).
async fn next_message(reader: &mut BufReader<OwnedReadHalf>) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    let idle = Duration::from_secs(CONTROL_ANSWER_SECS);
    match timeout(idle, read_line(reader, &mut line)).await {
        Err(_) => {
            tracing::warn!("control socket: a session's client went silent; ending it");
            Ok(None)
        }
        Ok(Ok(true)) if !line.is_empty() => Ok(Some(line)),
        Ok(Ok(_)) => Ok(None),
        Ok(Err(e)) => Err(e),
    }
}

/// Answers the messages of an import or export session until the client closes it.
async fn run_session(
    first: AdminCommand,
    mut reader: BufReader<OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    service: &Service,
) -> std::io::Result<()> {
    let wrong = |session: &str| {
        Reply::Output(AdminOutput::error(bad_request(format!(
            "a message that is not part of an {session} session came inside one"
        ))))
    };
    match first {
        AdminCommand::ImportParts => {
            let mut session = ImportSession::default();
            reply(&mut write, &Reply::Output(AdminOutput::ok(String::new()))).await?;
            while let Some(line) = next_message(&mut reader).await? {
                let answer = match protocol::read_request(&line) {
                    Ok(Command::Import(msg)) => {
                        Reply::Output(with_keepalive(&write, session.handle(service, msg)).await)
                    }
                    Ok(_) => wrong("import"),
                    Err(refusal) => refusal.into_reply(),
                };
                reply(&mut write, &answer).await?;
            }
        }
        AdminCommand::ExportParts { project } => {
            let (mut session, header) = ExportSession::start(service, project.as_deref());
            reply(&mut write, &Reply::Export(header)).await?;
            while let Some(session) = session.as_mut() {
                let Some(line) = next_message(&mut reader).await? else {
                    break;
                };
                let answer = match protocol::read_request(&line) {
                    Ok(Command::ExportNext) => Reply::Export(session.next(service)),
                    Ok(_) => wrong("export"),
                    Err(refusal) => refusal.into_reply(),
                };
                reply(&mut write, &answer).await?;
            }
        }
        _ => {}
    }
    write.shutdown().await
}

/// Whether the client has already closed the connection. A client keeps it open until it has
/// its answer, so a closed one gave up (the service was stopped or stuck meanwhile) and told its
/// user the command failed: running it now would do what the user was told did not happen.
async fn client_gone(reader: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> bool {
    // Polled once: end of stream is already there, or the client is still waiting.
    matches!(timeout(Duration::ZERO, reader.fill_buf()).await, Ok(Ok([])))
}

/// Runs `work`, writing a space to the client every second until it is done, so the client
/// knows the service is alive however long the command takes.
async fn with_keepalive<T>(write: &OwnedWriteHalf, work: impl Future<Output = T>) -> T {
    let mut work = std::pin::pin!(work);
    let mut ticks = tokio::time::interval(Duration::from_secs(CONTROL_KEEPALIVE_SECS));
    loop {
        tokio::select! {
            // A command that is done at once sends no keep-alive at all.
            biased;
            output = &mut work => return output,
            _ = ticks.tick() => {
                // Never waits: a client that stopped reading only misses keep-alives, and the
                // command runs to its end as it did before keep-alives existed.
                let _ = write.try_write(b" ");
            }
        }
    }
}

fn too_large() -> AdminOutput {
    AdminOutput::error(format!(
        "the request is larger than the control socket takes ({} MiB); stop the service and \
         run the command again: it then opens the data file itself",
        CONTROL_REQUEST_LIMIT >> 20
    ))
}

/// How long a client waits for the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Patience {
    /// Longest time without a byte from the service (or without it taking any of the request).
    pub(crate) silence: Duration,
    /// Longest time for the whole command.
    pub(crate) answer: Duration,
}

impl Patience {
    pub(crate) fn for_command(cmd: &AdminCommand) -> Patience {
        let answer = match cmd {
            AdminCommand::Backup { .. } | AdminCommand::Migrate { .. } => CONTROL_LONG_ANSWER_SECS,
            _ => CONTROL_ANSWER_SECS,
        };
        Patience {
            silence: Duration::from_secs(CONTROL_SILENCE_SECS),
            answer: Duration::from_secs(answer),
        }
    }
}

/// Why a command sent to the service has no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    #[error("the service was silent for {0} s")]
    Silent(u64),
    #[error("the service has not finished the command after {0} s")]
    Unfinished(u64),
    #[error("the service closed the connection without an answer")]
    Closed,
    #[error("the answer is not what the command expects: {0}")]
    Garbled(serde_json::Error),
    #[error("the service speaks control protocol {service}")]
    Mismatch {
        service: u32,
        /// The service's release; `None` from a service of protocol 1, which does not say.
        service_version: Option<String>,
    },
    #[error("the request is larger than the control socket takes")]
    TooLarge,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A client's connection to the control socket: requests out, one answer line for each.
pub(crate) struct Conn {
    read: tokio::net::unix::OwnedReadHalf,
    write: OwnedWriteHalf,
    patience: Patience,
    /// Bytes read past the end of the last answer.
    pending: Vec<u8>,
    data: PathBuf,
}

impl Conn {
    pub(crate) fn new(stream: UnixStream, patience: Patience, data: &Path) -> Conn {
        let (read, write) = stream.into_split();
        Conn {
            read,
            write,
            patience,
            pending: Vec::new(),
            data: data.to_path_buf(),
        }
    }

    /// Sends `command` and reads its reply, within the patience. A service of another
    /// protocol version is an error ([`SendError::Mismatch`]).
    pub(crate) async fn call(&mut self, command: Command) -> Result<Reply, SendError> {
        let patience = self.patience;
        let overall = Instant::now() + patience.answer;
        let silent = || SendError::Silent(patience.silence.as_secs());
        let request = Request::new(command);
        let mut line = serde_json::to_vec(&request).map_err(std::io::Error::other)?;
        line.push(b'\n');
        if line.len() as u64 > CONTROL_REQUEST_LIMIT {
            return Err(SendError::TooLarge);
        }
        // A stuck service stops taking the request once the socket's buffer is full.
        for chunk in line.chunks(CHUNK) {
            timeout(patience.silence, self.write.write_all(chunk))
                .await
                .map_err(|_| silent())??;
        }
        let mut answer = std::mem::take(&mut self.pending);
        let mut buf = vec![0; CHUNK];
        let mut searched = 0;
        loop {
            if let Some(end) = answer[searched..].iter().position(|&b| b == b'\n') {
                let end = searched + end;
                self.pending = answer.split_off(end + 1);
                answer.truncate(end);
                break;
            }
            searched = answer.len();
            let until = (Instant::now() + patience.silence).min(overall);
            let n = match timeout_at(until, self.read.read(&mut buf)).await {
                Ok(n) => n?,
                Err(_) if until == overall => {
                    return Err(SendError::Unfinished(patience.answer.as_secs()));
                }
                Err(_) => return Err(silent()),
            };
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
        }
        if answer.iter().all(u8::is_ascii_whitespace) {
            return Err(SendError::Closed);
        }
        // Keep-alive spaces lead the answer; JSON skips them.
        match serde_json::from_slice::<Reply>(&answer) {
            Ok(Reply::VersionMismatch {
                service,
                service_version,
                ..
            }) => Err(SendError::Mismatch {
                service,
                service_version: Some(service_version),
            }),
            Ok(reply) => Ok(reply),
            // A bare output is how a service of protocol 1 refuses a request it cannot read.
            Err(e) => match serde_json::from_slice::<AdminOutput>(&answer) {
                Ok(_) => Err(SendError::Mismatch {
                    service: UNVERSIONED,
                    service_version: None,
                }),
                Err(_) => Err(SendError::Garbled(e)),
            },
        }
    }

    /// What a command says when the service gave no answer.
    pub(crate) fn failure(&self, e: SendError) -> AdminOutput {
        let socket = socket_path(&self.data);
        match e {
            SendError::Silent(_) => not_answering(&self.data, &socket),
            SendError::TooLarge => too_large(),
            SendError::Mismatch {
                service,
                service_version,
            } => AdminOutput::error(protocol::mismatch_message(
                service,
                service_version.as_deref(),
            )),
            e @ SendError::Unfinished(_) => AdminOutput::error(format!(
                "{e} (at {}); it may still finish it: see its log",
                socket.display()
            )),
            e => AdminOutput::error(format!(
                "the service at {} did not answer: {e}",
                socket.display()
            )),
        }
    }
}

/// Sends `cmd` over a connected control socket and reads the reply, within `patience`.
#[cfg(test)]
async fn send(
    stream: UnixStream,
    cmd: AdminCommand,
    patience: Patience,
) -> Result<Reply, SendError> {
    match Conn::new(stream, patience, Path::new("."))
        .call(Command::from(cmd))
        .await
    {
        Err(SendError::TooLarge) => Ok(Reply::Output(too_large())),
        other => other,
    }
}

/// What an admin command says when a service holds the data but does not answer.
fn not_answering(data: &Path, socket: &Path) -> AdminOutput {
    AdminOutput::error(format!(
        "{} is in use by a running service, but its control socket {} does not answer; \
         is the service starting up or stuck?",
        data.display(),
        socket.display()
    ))
}

/// Where admin commands go: the running service, or the service opened here on the file.
pub(crate) enum Endpoint {
    Socket(Conn),
    Local(Box<Service>),
}

/// Connects to the control socket of the service running on `data`: `None` when no service
/// listens on it.
async fn connect(data: &Path, patience: Patience) -> Result<Option<Conn>, AdminOutput> {
    let socket = socket_path(data);
    match timeout(patience.silence, UnixStream::connect(&socket)).await {
        Ok(Ok(stream)) => Ok(Some(Conn::new(stream, patience, data))),
        // A service runs (or ran) as another user: opening the file would be refused too, and
        // the socket's refusal names the user to run as.
        Ok(Err(e)) => {
            // The directory, when it hides the socket: the socket may not even exist.
            let refused = if socket.symlink_metadata().is_ok() {
                &socket
            } else {
                data
            };
            match AccessDenied::from_io(refused, &e) {
                Some(denied) => Err(AdminOutput::error(denied)),
                None => Ok(None),
            }
        }
        Err(_) => Ok(None),
    }
}

/// Runs an admin command in the service running on `data`: its reply; `None` when no service
/// listens on its control socket.
pub(crate) async fn ask_running(data: &Path, cmd: AdminCommand) -> Option<Reply> {
    match connect(data, Patience::for_command(&cmd)).await {
        Err(output) => Some(Reply::Output(output)),
        Ok(None) => None,
        Ok(Some(mut conn)) => Some(ask(&mut conn, cmd).await),
    }
}

/// Sends `cmd` to the service: its reply, or what to say when there is none.
async fn ask(conn: &mut Conn, cmd: AdminCommand) -> Reply {
    match conn.call(Command::from(cmd)).await {
        Ok(reply) => reply,
        Err(e) => Reply::Output(conn.failure(e)),
    }
}

/// Connects to the running service if there is one, else opens the data file here (creating
/// it only when `may_create`).
pub(crate) async fn open(
    place: &Place,
    patience: Patience,
    may_create: bool,
) -> Result<Endpoint, AdminOutput> {
    let data = place.dir.as_path();
    if let Some(conn) = connect(data, patience).await? {
        return Ok(Endpoint::Socket(conn));
    }
    let config = ServiceConfig {
        site_root: None,
        notify: crate::cli::serve::from_env()
            .map(|args| args.notify_config())
            .unwrap_or_default(),
        database: place.database.clone(),
        ..ServiceConfig::default()
    };
    let opened = if may_create {
        Service::open(data, config, Clock::System)
    } else {
        Service::open_existing(data, config, Clock::System)
    };
    match opened {
        Ok(service) => Ok(Endpoint::Local(Box::new(service))),
        Err(StoreError::Locked(_)) => Err(not_answering(data, &socket_path(data))),
        // Only the active node writes to the database, so a command goes through it.
        Err(StoreError::Pg(PgError::Standby { target })) => Err(AdminOutput::error(format!(
            "another overdue node is active on {target}: run the command on its machine \
             (through its control socket), or use the API"
        ))),
        Err(StoreError::NoDataFile(_)) => Err(AdminOutput {
            code: USAGE_EXIT,
            ..AdminOutput::error(datadir::no_data(data, &datadir::packaged()))
        }),
        Err(e) => Err(AdminOutput::error(e)),
    }
}

/// Runs an admin command: through the running service if there is one, else on the file.
/// Its output as text.
pub(crate) async fn run_admin(place: &Place, cmd: AdminCommand) -> AdminOutput {
    request(place, cmd).await.text()
}

/// Runs an admin command: through the running service if there is one, else on the file.
/// Its reply, typed for the commands whose result is data.
pub(crate) async fn request(place: &Place, cmd: AdminCommand) -> Reply {
    let may_create = cmd.may_create_data();
    match open(place, Patience::for_command(&cmd), may_create).await {
        Ok(Endpoint::Socket(mut conn)) => ask(&mut conn, cmd).await,
        Ok(Endpoint::Local(service)) => {
            let reply = admin::answer(&service, cmd).await;
            service.close().await;
            reply
        }
        Err(output) => Reply::Output(output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::admin::ProjectCmd;

    const PATIENCE: Patience = Patience {
        silence: Duration::from_secs(10),
        answer: Duration::from_secs(300),
    };

    fn command() -> AdminCommand {
        AdminCommand::Project(ProjectCmd::Ls { json: false })
    }

    /// The service's side of one command: reads the request, then answers what `work` gives,
    /// with keep-alives meanwhile.
    async fn fake_service(stream: UnixStream, work: impl Future<Output = AdminOutput>) {
        let (read, mut write) = stream.into_split();
        let mut line = String::new();
        BufReader::new(read)
            .read_line(&mut line)
            .await
            .expect("request");
        protocol::read_request(&line).expect("a command");
        let output = with_keepalive(&write, work).await;
        let mut reply = serde_json::to_vec(&Reply::Output(output)).expect("json");
        reply.push(b'\n');
        write.write_all(&reply).await.expect("reply");
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_service_that_keeps_alive_is_waited_for() {
        let (client, service) = UnixStream::pair().expect("pair");
        tokio::spawn(fake_service(service, async {
            tokio::time::sleep(Duration::from_secs(120)).await;
            AdminOutput::ok("done\n".into())
        }));
        let reply = send(client, command(), PATIENCE).await.expect("answer");
        assert_eq!(reply, Reply::Output(AdminOutput::ok("done\n".into())));
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_service_is_given_up_after_the_silence_limit() {
        let (client, _service) = UnixStream::pair().expect("pair");
        let started = Instant::now();
        let err = send(client, command(), PATIENCE).await.expect_err("silent");
        assert!(matches!(err, SendError::Silent(10)), "{err}");
        assert_eq!(started.elapsed(), PATIENCE.silence);
    }

    #[tokio::test(start_paused = true)]
    async fn a_service_that_never_finishes_is_given_up_after_the_answer_limit() {
        let (client, service) = UnixStream::pair().expect("pair");
        tokio::spawn(fake_service(service, std::future::pending()));
        let started = Instant::now();
        let err = send(client, command(), PATIENCE)
            .await
            .expect_err("unfinished");
        assert!(matches!(err, SendError::Unfinished(300)), "{err}");
        assert_eq!(started.elapsed(), PATIENCE.answer);
    }

    #[tokio::test(start_paused = true)]
    async fn a_service_that_takes_no_request_is_silent() {
        // A stopped service stops taking the request once the socket's buffer is full.
        let (client, _service) = UnixStream::pair().expect("pair");
        let big = AdminCommand::Project(ProjectCmd::Add {
            name: "x".repeat(16 << 20),
            json: false,
        });
        let err = send(client, big, PATIENCE).await.expect_err("silent");
        assert!(matches!(err, SendError::Silent(10)), "{err}");
    }

    #[test]
    fn clients_that_read_one_line_skip_keepalives() {
        // Releases before keep-alives read one line and parse it: the spaces are JSON
        // whitespace.
        let mut wire = b"   ".to_vec();
        wire.extend(serde_json::to_vec(&AdminOutput::ok("x\n".into())).expect("json"));
        wire.push(b'\n');
        let line = String::from_utf8(wire).expect("utf-8");
        let parsed: AdminOutput = serde_json::from_str(&line).expect("parses");
        assert_eq!(parsed, AdminOutput::ok("x\n".into()));
    }

    /// A service of another protocol: answers every request with `line`.
    async fn answers_with(stream: UnixStream, line: String) {
        let (read, mut write) = stream.into_split();
        let mut request = String::new();
        BufReader::new(read)
            .read_line(&mut request)
            .await
            .expect("request");
        write.write_all(line.as_bytes()).await.expect("reply");
    }

    #[tokio::test]
    async fn a_service_of_another_version_is_named_with_what_to_do() {
        let newer = serde_json::to_string(&Reply::VersionMismatch {
            service: protocol::PROTOCOL_VERSION + 1,
            client: protocol::PROTOCOL_VERSION,
            service_version: "9.9.9".into(),
        })
        .expect("json");
        // How a service of protocol 1 refuses a request it cannot read.
        let unversioned = serde_json::to_string(&AdminOutput::error(
            "bad control request: unknown variant `version`",
        ))
        .expect("json");
        for (answer, named) in [
            (
                newer,
                format!("(9.9.9, protocol {})", protocol::PROTOCOL_VERSION + 1),
            ),
            (unversioned, "(an earlier release, protocol 1)".to_string()),
        ] {
            let (client, service) = UnixStream::pair().expect("pair");
            tokio::spawn(answers_with(service, format!("  {answer}\n")));
            let mut conn = Conn::new(client, PATIENCE, Path::new("/d"));
            let err = conn
                .call(Command::from(command()))
                .await
                .expect_err("mismatch");
            assert!(matches!(err, SendError::Mismatch { .. }), "{err}");
            let output = conn.failure(err);
            assert_eq!(output.code, 1);
            assert!(
                output.stderr.contains(&named)
                    && output.stderr.contains("sudo systemctl restart overdue"),
                "{}",
                output.stderr
            );
        }
    }

    #[test]
    fn backup_and_migration_batches_get_the_long_deadline() {
        let long = Duration::from_secs(CONTROL_LONG_ANSWER_SECS);
        let backup = AdminCommand::Backup {
            path: "/tmp/x".into(),
            force: false,
        };
        assert_eq!(Patience::for_command(&backup).answer, long);
        let migrate = AdminCommand::Migrate {
            project: None,
            checks: Vec::new(),
        };
        assert_eq!(Patience::for_command(&migrate).answer, long);
        assert_eq!(
            Patience::for_command(&command()).answer,
            Duration::from_secs(CONTROL_ANSWER_SECS)
        );
    }
}
