//! systemd readiness notification for `Type=notify` units: `overdue serve` sends `READY=1` once
//! it listens and has opened its data, and `STOPPING=1` when it begins to shut down, as one
//! datagram each to the socket named by `$NOTIFY_SOCKET` (the `sd_notify` protocol). Without the
//! variable (not started by systemd) nothing is sent.

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The environment variable systemd sets for services that may notify.
pub(crate) const NOTIFY_SOCKET: &str = "NOTIFY_SOCKET";

/// Where `$NOTIFY_SOCKET` points: a path, or (a leading `@`) a Linux abstract socket name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    Path(&'a str),
    Abstract(&'a str),
}

/// Reads a `$NOTIFY_SOCKET` value; `None` when empty (nothing to notify).
pub(crate) fn parse_target(value: &str) -> Option<Target<'_>> {
    match value.strip_prefix('@') {
        Some(name) => Some(Target::Abstract(name)),
        None if value.is_empty() => None,
        None => Some(Target::Path(value)),
    }
}

fn address(target: &Target<'_>) -> io::Result<SocketAddr> {
    match target {
        Target::Path(path) => SocketAddr::from_pathname(path),
        Target::Abstract(name) => {
            #[cfg(target_os = "linux")]
            {
                <SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(name)
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = name;
                Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "abstract sockets exist only on Linux",
                ))
            }
        }
    }
}

/// Sends `state` (e.g. `READY=1`) to `target`.
pub(crate) fn send_to(target: &Target<'_>, state: &str) -> io::Result<()> {
    let socket = UnixDatagram::unbound()?;
    socket.send_to_addr(state.as_bytes(), &address(target)?)?;
    Ok(())
}

/// Sends `state` to `$NOTIFY_SOCKET` if it is set; a failure is logged, never fatal (the
/// service works the same, systemd only learns of it later).
pub(crate) fn notify(state: &str) {
    let Some(value) = std::env::var_os(NOTIFY_SOCKET) else {
        return;
    };
    let Some(value) = value.to_str() else {
        tracing::warn!("{NOTIFY_SOCKET} is not UTF-8; not notifying systemd");
        return;
    };
    if let Some(target) = parse_target(value)
        && let Err(e) = send_to(&target, state)
    {
        tracing::warn!("cannot notify systemd ({state}) through {value}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_paths_or_abstract_names() {
        assert_eq!(
            parse_target("/run/systemd/notify"),
            Some(Target::Path("/run/systemd/notify"))
        );
        assert_eq!(
            parse_target("@/org/freedesktop/systemd1/notify/1"),
            Some(Target::Abstract("/org/freedesktop/systemd1/notify/1"))
        );
        assert_eq!(parse_target(""), None);
    }

    #[test]
    fn a_state_arrives_as_one_datagram_on_a_path_socket() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notify");
        let receiver = UnixDatagram::bind(&path).expect("bind");
        let path = path.to_str().expect("UTF-8 path");
        send_to(&Target::Path(path), "READY=1").expect("send");
        let mut buf = [0u8; 64];
        let n = receiver.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..n], b"READY=1");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_state_arrives_on_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("overdue-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("addr");
        let receiver = UnixDatagram::bind_addr(&addr).expect("bind");
        send_to(&Target::Abstract(&name), "STOPPING=1").expect("send");
        let mut buf = [0u8; 64];
        let n = receiver.recv(&mut buf).expect("recv");
        assert_eq!(&buf[..n], b"STOPPING=1");
    }

    #[test]
    fn sending_to_a_missing_socket_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("absent");
        let err = send_to(&Target::Path(path.to_str().expect("UTF-8")), "READY=1");
        assert!(err.is_err());
    }
}
