//! The control socket: while `serve` runs, admin commands reach it through a Unix socket in
//! the data directory (mode 0600) and run inside the service, so nothing requires stopping
//! it. One JSON line in ([`AdminCommand`]), one JSON line out ([`AdminOutput`]).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::cli::ChannelCmd;
use crate::cli::admin::{AdminCommand, AdminOutput, execute};
use crate::model::limits::{
    CONTROL_CHANNEL_TEST_TIMEOUT_SECS, CONTROL_LONG_TIMEOUT_SECS, CONTROL_REQUEST_LIMIT,
    CONTROL_TIMEOUT_SECS,
};
use crate::service::{Clock, Service, ServiceConfig};
use crate::store::StoreError;

/// Name of the socket inside the data directory.
pub const SOCKET_FILE: &str = "overdue.sock";

pub fn socket_path(data: &Path) -> PathBuf {
    data.join(SOCKET_FILE)
}

/// Binds the control socket, replacing a stale one left by a killed process. The caller must
/// hold the data file's lock, so no live service can own the old socket.
pub fn bind(data: &Path) -> std::io::Result<UnixListener> {
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

/// Answers admin commands on `listener` until the task is dropped.
pub async fn serve(listener: UnixListener, service: Arc<Service>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let service = service.clone();
                tokio::spawn(async move {
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
}

async fn answer(stream: UnixStream, service: &Service) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    BufReader::new(read.take(CONTROL_REQUEST_LIMIT))
        .read_line(&mut line)
        .await?;
    let output = if line.len() as u64 >= CONTROL_REQUEST_LIMIT && !line.ends_with('\n') {
        too_large()
    } else {
        match serde_json::from_str::<AdminCommand>(&line) {
            Ok(cmd) => execute(service, cmd).await,
            Err(e) => AdminOutput::error(format!("bad control request: {e}")),
        }
    };
    let mut reply = serde_json::to_vec(&output).map_err(std::io::Error::other)?;
    reply.push(b'\n');
    write.write_all(&reply).await?;
    write.shutdown().await
}

fn too_large() -> AdminOutput {
    AdminOutput::error(format!(
        "the request is larger than the control socket takes ({} MiB); stop the service and \
         run the command again: it then opens the data file itself",
        CONTROL_REQUEST_LIMIT >> 20
    ))
}

/// How long `cmd` may take before the service counts as not answering.
pub fn deadline(cmd: &AdminCommand) -> Duration {
    Duration::from_secs(match cmd {
        AdminCommand::Backup { .. }
        | AdminCommand::Export { .. }
        | AdminCommand::Import { .. }
        | AdminCommand::Migrate { .. } => CONTROL_LONG_TIMEOUT_SECS,
        AdminCommand::Channel(ChannelCmd::Test { .. }) => CONTROL_CHANNEL_TEST_TIMEOUT_SECS,
        _ => CONTROL_TIMEOUT_SECS,
    })
}

/// Sends `cmd` and reads the answer, within `limit` for the whole exchange: a service that
/// holds the socket but is stopped (SIGSTOP) or out of file descriptors accepts the connection
/// (the kernel queues it) and then never answers.
async fn send(
    stream: UnixStream,
    cmd: &AdminCommand,
    limit: Duration,
) -> std::io::Result<AdminOutput> {
    let (read, mut write) = stream.into_split();
    let mut request = serde_json::to_vec(cmd).map_err(std::io::Error::other)?;
    request.push(b'\n');
    if request.len() as u64 > CONTROL_REQUEST_LIMIT {
        return Ok(too_large());
    }
    let exchange = async {
        write.write_all(&request).await?;
        let mut line = String::new();
        BufReader::new(read).read_line(&mut line).await?;
        serde_json::from_str(&line).map_err(std::io::Error::other)
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(answer) => answer,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {}s", limit.as_secs()),
        )),
    }
}

/// Runs an admin command: through the running service if there is one, else on the file.
pub async fn run_admin(data: &Path, cmd: AdminCommand) -> AdminOutput {
    let socket = socket_path(data);
    let limit = deadline(&cmd);
    let connected = tokio::time::timeout(limit, UnixStream::connect(&socket)).await;
    if let Ok(Ok(stream)) = connected {
        return send(stream, &cmd, limit).await.unwrap_or_else(|e| {
            AdminOutput::error(format!(
                "the service at {} does not answer ({e}); is it stopped or stuck? \
                 `systemctl status overdue` shows its state, and restarting it is safe",
                socket.display()
            ))
        });
    }
    let config = ServiceConfig {
        site_root: None,
        notify: crate::notify::NotifyConfig::from_env(),
        ..ServiceConfig::default()
    };
    match Service::open(data, config, Clock::System) {
        Ok(service) => {
            let output = execute(&service, cmd).await;
            service.close().await;
            output
        }
        Err(StoreError::Locked(_)) => AdminOutput::error(format!(
            "{} is in use by a running service, but its control socket {} does not answer; \
             is the service starting up or stuck?",
            data.display(),
            socket.display()
        )),
        Err(e) => AdminOutput::error(e),
    }
}
