//! `overdue health`: asks the service on the listen address for `/api/v3/status/` and exits 0
//! when it answers `200 OK`, 1 otherwise. A container image built `FROM scratch` has no curl,
//! so its `HEALTHCHECK` runs the binary itself; the request is plain HTTP/1.0 over a socket,
//! without the async runtime.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use clap::Args;

use crate::cli::admin::AdminOutput;
use crate::model::limits::DOCTOR_NET_TIMEOUT_SECS;

/// The most of an answer that is read: the status page is two words.
const ANSWER_LIMIT: u64 = 64 << 10;

#[derive(Debug, Clone, Args)]
pub(crate) struct HealthArgs {
    /// The address `serve` listens on; `0.0.0.0` and `[::]` are asked on the loopback address.
    #[arg(
        long,
        env = "OVERDUE_LISTEN",
        default_value = crate::cli::serve::DEFAULT_LISTEN,
        value_name = "ADDR"
    )]
    pub listen: String,
}

/// Where to connect to reach a service that listens on `addr`: a listener on every address
/// (`0.0.0.0`, `[::]`) is reached on the loopback address of its family.
pub(crate) fn local_address(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// Whether a raw HTTP answer of the status page says the service is healthy; else why not.
pub(crate) fn judge_answer(raw: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).unwrap_or_default();
    match (status, body.trim()) {
        ("200", "OK") => Ok(()),
        ("", _) => Err("no HTTP answer".into()),
        (_, "") => Err(format!("answered {status}")),
        (_, body) => Err(format!("answered {status}: {body}")),
    }
}

fn ask(addr: SocketAddr) -> Result<(), String> {
    let timeout = Duration::from_secs(DOCTOR_NET_TIMEOUT_SECS);
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET /api/v3/status/ HTTP/1.0\r\nHost: {addr}\r\nUser-Agent: overdue-health\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream
        .take(ANSWER_LIMIT)
        .read_to_end(&mut answer)
        .map_err(|e| e.to_string())?;
    judge_answer(&answer)
}

/// Runs `overdue health`.
pub(crate) fn run(args: &HealthArgs) -> AdminOutput {
    let addrs: Vec<SocketAddr> = match args.listen.to_socket_addrs() {
        Ok(addrs) => addrs.map(local_address).collect(),
        Err(e) => {
            return AdminOutput::error(format!(
                "cannot use the listen address {} ({e}); give it as --listen HOST:PORT or \
                 OVERDUE_LISTEN",
                args.listen
            ));
        }
    };
    let mut why = String::from("no address");
    for addr in addrs {
        let url = format!("http://{addr}/api/v3/status/");
        match ask(addr) {
            Ok(()) => return AdminOutput::ok(format!("healthy: {url} answered OK\n")),
            Err(e) => why = format!("{url}: {e}"),
        }
    }
    AdminOutput::error(format!("unhealthy: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_listeners_are_asked_on_loopback() {
        let parse = |s: &str| s.parse::<SocketAddr>().expect("addr");
        assert_eq!(
            local_address(parse("0.0.0.0:8000")),
            parse("127.0.0.1:8000")
        );
        assert_eq!(local_address(parse("[::]:8000")), parse("[::1]:8000"));
        assert_eq!(local_address(parse("10.0.0.2:80")), parse("10.0.0.2:80"));
    }

    #[test]
    fn only_200_ok_is_healthy() {
        assert_eq!(
            judge_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nOK"),
            Ok(())
        );
        let sick =
            judge_answer(b"HTTP/1.1 503 Service Unavailable\r\n\r\nstorage unavailable: disk full");
        assert_eq!(
            sick,
            Err("answered 503: storage unavailable: disk full".into())
        );
        assert_eq!(
            judge_answer(b"HTTP/1.1 404 Not Found\r\n\r\n"),
            Err("answered 404".into())
        );
        assert_eq!(judge_answer(b""), Err("no HTTP answer".into()));
    }
}
