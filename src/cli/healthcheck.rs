//! `khaelor-perm healthcheck`: GETs `/healthz` on the configured address and exits 0
//! when it answers 200, 1 otherwise. For container HEALTHCHECKs, which have no curl.
//!
//! Speaks just enough HTTP/1.1 over a std `TcpStream`; it must not pull in a client.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The server's address (`0.0.0.0` and `::` are reached via loopback).
    #[arg(long, env = "KHAELOR_PERM_ADDR", default_value = "127.0.0.1:8790")]
    pub addr: SocketAddr,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 3)]
    pub timeout: u64,
}

pub fn run(args: Args) -> ExitCode {
    match check(args.addr, Duration::from_secs(args.timeout.max(1))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("khaelor-perm healthcheck: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the server at `addr` answers `/healthz` with 200.
pub fn check(addr: SocketAddr, timeout: Duration) -> Result<(), String> {
    let mut target = addr;
    if addr.ip().is_unspecified() {
        target.set_ip(match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        });
    }
    let mut stream = TcpStream::connect_timeout(&target, timeout)
        .map_err(|e| format!("could not connect to `{target}`: {e}"))?;
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("could not send to `{target}`: {e}"))?;
    let mut head = [0u8; 64];
    let n = stream
        .read(&mut head)
        .map_err(|e| format!("no answer from `{target}`: {e}"))?;
    let line = String::from_utf8_lossy(head.get(..n).unwrap_or_default()).to_string();
    let status = line.split_whitespace().nth(1).unwrap_or("");
    if status == "200" {
        Ok(())
    } else {
        Err(format!(
            "`{target}/healthz` answered `{}`",
            line.lines().next().unwrap_or("")
        ))
    }
}
