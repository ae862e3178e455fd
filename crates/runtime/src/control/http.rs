//! The metrics endpoint: an HTTP/1.1 server (hyper) on the control plane's tokio runtime
//! answering `GET /metrics` with the exposition of a fresh snapshot (`exposition.rs`).
//!
//! Protocol:
//! 1. The address is checked first: loopback only (`127.0.0.0/8`, `::1`, and IPv4-mapped
//!    loopback) unless [`ServeOptions::allow_remote`] says otherwise — the metrics name the
//!    machine's topology and load, and the endpoint has no authentication.
//! 2. The listener is bound on the caller's thread, so that a bind failure is the caller's
//!    typed error ([`ServeError::Bind`]) and `127.0.0.1:0` returns its real port; it is then
//!    registered with the control plane's runtime and served by a task spawned there.
//! 3. Each connection is a task of that runtime; each request takes one snapshot through the
//!    control plane's [`MetricsHandle`]. `GET /metrics` → 200 with the exposition; another
//!    method on `/metrics` → 405; another path → 404. Headers must arrive within
//!    [`HEADER_TIMEOUT`].
//! 4. The server, its listener and its connections are tasks of the control plane's
//!    runtime: dropping the [`ControlPlane`](super::ControlPlane) stops that runtime, which
//!    drops them all (the port is free again once `drop` returns).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::exposition;
use crate::handle::MetricsHandle;

/// The path the exposition is served at.
pub(crate) const METRICS_PATH: &str = "/metrics";

/// How long a connection may take to send a request's headers.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of [`ControlPlane::serve_metrics_with`](super::ControlPlane::serve_metrics_with).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let opts = zonal::runtime::ServeOptions::default();
/// assert!(!opts.allows_remote());
/// assert!(opts.allow_remote(true).allows_remote());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeOptions {
    allow_remote: bool,
}

impl ServeOptions {
    /// Whether to accept a non-loopback address (`0.0.0.0`, `[::]`, a LAN address). Off by
    /// default: the endpoint has no authentication and tells anyone who can reach it about
    /// the machine and its load.
    #[must_use]
    pub fn allow_remote(mut self, yes: bool) -> Self {
        self.allow_remote = yes;
        self
    }

    /// Whether a non-loopback address is accepted.
    #[must_use]
    pub fn allows_remote(&self) -> bool {
        self.allow_remote
    }
}

/// Why the metrics endpoint could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address is not a loopback address, and remote ones were not allowed.
    #[error(
        "refusing to serve metrics on {addr}: only loopback addresses (127.0.0.0/8, ::1) are \
         allowed unless remote ones are explicitly allowed (ServeOptions::allow_remote)"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address could not be bound (in use, not an address of this machine, no
    /// permission).
    #[error("cannot bind the metrics endpoint to {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The bound socket could not be set up for serving (non-blocking mode, registration
    /// with the control plane's runtime).
    #[error("cannot serve metrics on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's or tokio's error.
        source: std::io::Error,
    },
}

/// Whether `ip` is a loopback address, IPv4-mapped IPv6 included.
fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Step 1: refuses a non-loopback address unless allowed.
pub(crate) fn check_addr(addr: SocketAddr, opts: ServeOptions) -> Result<(), ServeError> {
    if opts.allow_remote || is_loopback(addr.ip()) {
        Ok(())
    } else {
        Err(ServeError::NotLoopback { addr })
    }
}

/// Step 2: binds `addr` here and registers the listener with `rt`; returns it with its
/// bound address.
pub(crate) fn bind(
    addr: SocketAddr,
    rt: &tokio::runtime::Handle,
) -> Result<(TcpListener, SocketAddr), ServeError> {
    let std =
        std::net::TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
    let listen = |source| ServeError::Listen { addr, source };
    let local = std.local_addr().map_err(listen)?;
    std.set_nonblocking(true).map_err(listen)?;
    let _in_runtime = rt.enter();
    let listener = TcpListener::from_std(std).map_err(listen)?;
    Ok((listener, local))
}

/// Step 3: serves scrapes on `listener` until the runtime stops.
pub(crate) async fn serve(listener: TcpListener, metrics: MetricsHandle) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let reply = respond(&req, &metrics);
                async move { Ok::<_, Infallible>(reply) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "metrics endpoint: connection ended with an error");
            }
        });
    }
}

/// A response with a plain-text body.
fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The answer to one request.
fn respond(req: &Request<Incoming>, metrics: &MetricsHandle) -> Response<Full<Bytes>> {
    if req.uri().path() != METRICS_PATH {
        return text(
            StatusCode::NOT_FOUND,
            "not found: metrics are at /metrics\n",
        );
    }
    if req.method() != Method::GET {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: use GET\n",
        );
        r.headers_mut()
            .insert(ALLOW, hyper::header::HeaderValue::from_static("GET"));
        return r;
    }
    match metrics.encode() {
        Ok(body) => {
            let mut r = Response::new(Full::new(Bytes::from(body)));
            r.headers_mut().insert(
                CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(exposition::METRICS_CONTENT_TYPE),
            );
            r
        }
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode the metrics\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(addr: &str, opts: ServeOptions) -> Result<(), ServeError> {
        check_addr(addr.parse().unwrap(), opts)
    }

    #[test]
    fn loopback_is_accepted() {
        for a in [
            "127.0.0.1:0",
            "127.1.2.3:9000",
            "[::1]:0",
            "[::ffff:127.0.0.1]:0",
        ] {
            assert!(check(a, ServeOptions::default()).is_ok(), "{a}");
        }
    }

    #[test]
    fn others_are_refused_unless_allowed() {
        for a in [
            "0.0.0.0:0",
            "[::]:0",
            "192.168.1.10:9090",
            "[::ffff:10.0.0.1]:0",
        ] {
            let err = check(a, ServeOptions::default()).unwrap_err();
            assert!(
                matches!(err, ServeError::NotLoopback { addr } if addr == a.parse().unwrap()),
                "{a}: {err:?}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains(&a.parse::<SocketAddr>().unwrap().to_string()),
                "{msg}"
            );
            assert!(msg.contains("only loopback addresses"), "{msg}");
            assert!(msg.contains("explicitly allowed"), "{msg}");
            assert!(check(a, ServeOptions::default().allow_remote(true)).is_ok());
        }
    }
}
