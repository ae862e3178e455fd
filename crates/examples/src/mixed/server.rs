//! The HTTP server (hyper's HTTP/1, on loopback): every request waits a little on tokio's
//! timer (its small async work); a request for [`COMPUTE_PATH`] then starts a parallel
//! computation and awaits its result. The accept loop and each connection are tasks of the
//! setup's [`Backend`].

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::setup::Backend;
use super::work::Work;
use super::MixedError;

/// The path of a request that computes; any other path only waits.
pub const COMPUTE_PATH: &str = "/compute";
/// The path of a request that only waits.
pub const WAIT_PATH: &str = "/wait";

/// What every handler shares. The backend is held weakly, and a strong reference only for
/// a spawn or the start of a computation (never across an `.await`): the tasks never keep
/// their own runtime alive, so that dropping the setup's last reference stops it.
struct Service {
    backend: Weak<dyn Backend>,
    work: Work,
    wait: Duration,
}

/// The server of one setup: stops accepting when dropped (its connections end when the
/// load generator closes them, or with the setup's runtimes).
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Binds `127.0.0.1:0` and starts accepting on `backend`: each request waits `wait`
    /// (`tokio::time::sleep`), then, on [`COMPUTE_PATH`], computes `work` with
    /// [`Backend::compute`].
    ///
    /// # Errors
    /// [`MixedError::Io`] when the socket cannot be bound or registered with the reactor.
    pub fn start(
        backend: &Arc<dyn Backend>,
        work: Work,
        wait: Duration,
    ) -> Result<Self, MixedError> {
        let std = StdListener::bind("127.0.0.1:0")
            .map_err(|e| MixedError::io("bind the server to loopback", e))?;
        let addr = std
            .local_addr()
            .map_err(|e| MixedError::io("read the server's address", e))?;
        std.set_nonblocking(true)
            .map_err(|e| MixedError::io("make the server's socket non-blocking", e))?;
        let listener = {
            let _in_reactor = backend.reactor().enter();
            TcpListener::from_std(std)
                .map_err(|e| MixedError::io("register the server's socket", e))?
        };
        let stop = Arc::new(AtomicBool::new(false));
        let service = Arc::new(Service {
            backend: Arc::downgrade(backend),
            work,
            wait,
        });
        backend.spawn(Box::pin(accept_loop(listener, service, Arc::clone(&stop))));
        Ok(Self { addr, stop })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accept loop so that it sees the stop (a refused connection is as good).
        let _ = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Accepts until `stop`, one task per connection.
async fn accept_loop(listener: TcpListener, service: Arc<Service>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Acquire) {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        if stop.load(Ordering::Acquire) {
            break;
        }
        let _ = stream.set_nodelay(true);
        let Some(backend) = service.backend.upgrade() else {
            break;
        };
        let s = Arc::clone(&service);
        backend.spawn(Box::pin(async move {
            let handler = Arc::clone(&s);
            let svc = service_fn(move |req| respond(req, Arc::clone(&handler)));
            // A connection the client dropped ends with an error: nothing to report.
            let _ = http1::Builder::new()
                .header_read_timeout(None)
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        }));
    }
}

/// One request: the wait, then the computation if asked.
async fn respond(
    req: Request<Incoming>,
    service: Arc<Service>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    tokio::time::sleep(service.wait).await;
    let (status, body) = if req.uri().path() == COMPUTE_PATH {
        let started = service
            .backend
            .upgrade()
            .map(|b| b.compute(service.work.clone()));
        let result = match started {
            Some(computation) => computation.await,
            None => None,
        };
        match result {
            Some(v) => (StatusCode::OK, v.to_string()),
            None => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "computation lost".to_owned(),
            ),
        }
    } else {
        (StatusCode::OK, "ok".to_owned())
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    Ok(r)
}
