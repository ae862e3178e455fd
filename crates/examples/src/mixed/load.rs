//! The open-loop load generator: request `i` is due at `start + i / rate`, sent then
//! whatever happened to the earlier ones, and its latency runs from that *intended* time to
//! the end of its response, so a stall of the server (or of this generator) shows in the
//! latencies instead of slowing the arrivals. Bounded: at most [`LoadPlan::requests`]
//! requests, and a deadline [`LoadPlan::grace`] after the last one is due; a request not
//! answered by then counts as not completed, one not yet sent as not sent.
//!
//! It runs on a thread of its own with a current-thread tokio runtime, over HTTP/1
//! keep-alive connections (hyper's client): an idle one if there is one, else a new one, at
//! most [`LoadPlan::max_connections`] at a time (a request beyond waits for one, its
//! latency still counted from its intended time).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::cpu::{cpu_time, Who};
use super::server::{COMPUTE_PATH, WAIT_PATH};
use super::MixedError;

/// How long before the first request is due the schedule starts.
const LEAD: Duration = Duration::from_millis(5);

/// What to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadPlan {
    /// Requests, in all.
    pub requests: u64,
    /// Arrivals per second.
    pub rate: f64,
    /// Share of the requests that compute, in percent (spread evenly: request `i` computes
    /// when `⌊(i+1)·p/100⌋ > ⌊i·p/100⌋`).
    pub compute_percent: u32,
    /// How long after the last request is due the generator stops waiting.
    pub grace: Duration,
    /// Connections open at most at once.
    pub max_connections: usize,
}

impl LoadPlan {
    /// Whether request `i` computes.
    pub fn computes(&self, i: u64) -> bool {
        let p = u64::from(self.compute_percent);
        (i + 1) * p / 100 > i * p / 100
    }

    /// When request `i` is due, after the schedule's start.
    pub fn due(&self, i: u64) -> Duration {
        Duration::from_secs_f64(i as f64 / self.rate)
    }
}

/// What happened to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not sent: the deadline came first.
    NotSent,
    /// Sent, not answered by the deadline.
    Pending,
    /// Answered with success, this many µs after it was due.
    Done(u64),
    /// Answered with an error status, or its connection failed.
    Failed,
}

/// What one run of the generator saw.
#[derive(Clone, Debug)]
pub struct LoadResult {
    /// One outcome per planned request, in order.
    pub outcomes: Vec<Outcome>,
    /// Connections opened.
    pub connections: u64,
    /// The generator thread's own CPU time (taken out of the setup's).
    pub cpu: Duration,
    /// From the schedule's start until the last answer (or the deadline).
    pub elapsed: Duration,
}

impl LoadResult {
    /// Requests sent.
    pub fn sent(&self) -> u64 {
        self.count(|o| o != Outcome::NotSent)
    }

    /// Requests answered with success.
    pub fn completed(&self) -> u64 {
        self.count(|o| matches!(o, Outcome::Done(_)))
    }

    /// Requests answered with an error or lost with their connection.
    pub fn failed(&self) -> u64 {
        self.count(|o| o == Outcome::Failed)
    }

    fn count(&self, f: impl Fn(Outcome) -> bool) -> u64 {
        self.outcomes.iter().filter(|&&o| f(o)).count() as u64
    }
}

/// The keep-alive connections not in use, and the bound on all of them.
struct Connections {
    addr: SocketAddr,
    idle: Mutex<Vec<SendRequest<Empty<Bytes>>>>,
    slots: Semaphore,
    opened: std::sync::atomic::AtomicU64,
}

impl Connections {
    fn take_idle(&self) -> Option<SendRequest<Empty<Bytes>>> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(s) = idle.pop() {
            if !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    fn give_back(&self, s: SendRequest<Empty<Bytes>>) {
        if !s.is_closed() {
            self.idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(s);
        }
    }

    async fn open(
        &self,
    ) -> Result<SendRequest<Empty<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
        let stream = tokio::net::TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
        self.opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Ends when the server closes it or the sender is dropped.
        tokio::spawn(conn);
        Ok(sender)
    }
}

/// Runs `plan` against `addr` on a new thread; returns when every request is answered or
/// the deadline has passed.
///
/// # Errors
/// [`MixedError::Io`] when its thread or runtime cannot start.
pub fn run(addr: SocketAddr, plan: LoadPlan) -> Result<LoadResult, MixedError> {
    let thread = std::thread::Builder::new()
        .name("mixed-load".into())
        .spawn(move || -> Result<LoadResult, MixedError> {
            let cpu0 = cpu_time(Who::Thread);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| MixedError::io("start the load generator's runtime", e))?;
            let mut result = rt.block_on(drive(addr, plan));
            // Abandons what the deadline left: the connections close with the runtime.
            rt.shutdown_background();
            result.cpu = cpu_time(Who::Thread).saturating_sub(cpu0);
            Ok(result)
        })
        .map_err(|e| MixedError::io("start the load generator's thread", e))?;
    thread
        .join()
        .map_err(|_| MixedError::Lost("the load generator panicked"))?
}

/// The schedule, on the generator's runtime.
async fn drive(addr: SocketAddr, plan: LoadPlan) -> LoadResult {
    let n = plan.requests as usize;
    let outcomes = Arc::new(Mutex::new(vec![Outcome::NotSent; n]));
    let conns = Arc::new(Connections {
        addr,
        idle: Mutex::new(Vec::new()),
        slots: Semaphore::new(plan.max_connections),
        opened: std::sync::atomic::AtomicU64::new(0),
    });
    let start = Instant::now() + LEAD;
    let deadline = start + plan.due(plan.requests) + plan.grace;
    let mut tasks = JoinSet::new();
    for i in 0..n {
        let due = start + plan.due(i as u64);
        tokio::time::sleep_until(due.into()).await;
        if Instant::now() >= deadline {
            break;
        }
        set(&outcomes, i, Outcome::Pending);
        let (outcomes, conns) = (Arc::clone(&outcomes), Arc::clone(&conns));
        let path = if plan.computes(i as u64) {
            COMPUTE_PATH
        } else {
            WAIT_PATH
        };
        tasks.spawn(async move {
            let outcome = match one_request(&conns, path).await {
                Ok(true) => Outcome::Done(due.elapsed().as_micros() as u64),
                Ok(false) | Err(_) => Outcome::Failed,
            };
            set(&outcomes, i, outcome);
        });
    }
    let _ = tokio::time::timeout_at(deadline.into(), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    tasks.abort_all();
    let elapsed = start.elapsed();
    let outcomes = outcomes
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    LoadResult {
        outcomes,
        connections: conns.opened.load(std::sync::atomic::Ordering::Relaxed),
        cpu: Duration::ZERO,
        elapsed,
    }
}

fn set(outcomes: &Mutex<Vec<Outcome>>, i: usize, o: Outcome) {
    outcomes.lock().unwrap_or_else(PoisonError::into_inner)[i] = o;
}

/// Sends one GET for `path` on an idle or new connection and reads the whole answer:
/// whether its status was a success.
async fn one_request(
    conns: &Connections,
    path: &str,
) -> Result<bool, Box<dyn std::error::Error + Send + Sync>> {
    let _slot = conns.slots.acquire().await?;
    let mut sender = match conns.take_idle() {
        Some(s) => s,
        None => conns.open().await?,
    };
    sender.ready().await?;
    let req = Request::get(path)
        .header(hyper::header::HOST, "127.0.0.1")
        .body(Empty::<Bytes>::new())?;
    let resp = sender.send_request(req).await?;
    let ok = resp.status().is_success();
    resp.into_body().collect().await?;
    conns.give_back(sender);
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(p: u32) -> LoadPlan {
        LoadPlan {
            requests: 100,
            rate: 200.0,
            compute_percent: p,
            grace: Duration::from_secs(1),
            max_connections: 4,
        }
    }

    #[test]
    fn the_computing_share_is_spread_evenly() {
        for p in [0, 1, 20, 25, 50, 100] {
            let c: Vec<u64> = (0..100).filter(|&i| plan(p).computes(i)).collect();
            assert_eq!(c.len() as u32, p, "{p}%");
        }
        let c: Vec<u64> = (0..8).filter(|&i| plan(25).computes(i)).collect();
        assert_eq!(c, [3, 7]);
    }

    #[test]
    fn requests_are_due_at_the_arrival_rate() {
        assert_eq!(plan(0).due(0), Duration::ZERO);
        assert_eq!(plan(0).due(200), Duration::from_secs(1));
    }

    #[test]
    fn the_counts_tell_outcomes_apart() {
        let r = LoadResult {
            outcomes: vec![
                Outcome::Done(5),
                Outcome::Failed,
                Outcome::Pending,
                Outcome::NotSent,
            ],
            connections: 1,
            cpu: Duration::ZERO,
            elapsed: Duration::ZERO,
        };
        assert_eq!((r.sent(), r.completed(), r.failed()), (3, 1, 1));
    }
}
