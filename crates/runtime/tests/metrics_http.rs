//! The control plane's Prometheus endpoint over real HTTP (feature `control-plane`): what a
//! scrape returns, against `ThreadPool::metrics`; the loopback-only rule; stopping on drop;
//! and the same series served by a user's own hyper service from a registry of its own
//! (`PoolCollector`).
//!
//! Every request goes to a loopback address of this machine.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use zonal_runtime::{ControlPlane, PoolMetrics, ServeError, ServeOptions, ThreadPoolBuilder};

/// A safety net against a hung server, not a timing assertion.
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// An HTTP reply: status code, headers (lower-case names), body.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

/// Sends one HTTP/1.1 request to `addr` and reads the reply to the end.
fn request(addr: SocketAddr, method: &str, path: &str) -> Reply {
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    conn.read_to_string(&mut raw).expect("read the reply");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status_line = lines.next().unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn scrape(addr: SocketAddr) -> Reply {
    request(addr, "GET", "/metrics")
}

/// The samples of an exposition: series (name and labels, as written) → value.
fn samples(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_owned(), value.parse().unwrap())
        })
        .collect()
}

fn value(s: &BTreeMap<String, f64>, series: &str) -> f64 {
    *s.get(series)
        .unwrap_or_else(|| panic!("no series {series} in {s:#?}"))
}

fn roman(i: usize) -> &'static str {
    ["I", "II", "III", "IV", "V", "VI", "VII", "VIII"][i]
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn pool() -> zonal_runtime::ThreadPool {
    ThreadPoolBuilder::new().preset("s1").build().unwrap()
}

fn control(pool: &zonal_runtime::ThreadPool) -> ControlPlane {
    ControlPlane::start(pool.metrics_handle(), Duration::from_millis(50)).unwrap()
}

/// Work that steals: nested joins and a loop over every node.
fn work(pool: &zonal_runtime::ThreadPool) {
    fn fib(n: u32) -> u64 {
        if n < 2 {
            return u64::from(n);
        }
        let (a, b) = zonal_runtime::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    assert_eq!(pool.install(|| fib(18)), 2584);
    pool.par_for(0..20_000, 50, |_| {});
}

/// The counters a scrape is compared on: those that stop moving once the pool is quiet.
fn settled(m: &PoolMetrics) -> impl PartialEq + std::fmt::Debug {
    (
        m.total.steals_by_level.clone(),
        m.total.refused,
        m.total.tasks_run,
        m.tasks_spawned(),
        m.total.balance_migrations_by_level.clone(),
        m.turnaround.clone(),
    )
}

/// A scrape and the pool's snapshot it matches: scraped between two equal snapshots (the
/// last tasks' counters are bumped just after their latches release the caller).
fn quiet_scrape(pool: &zonal_runtime::ThreadPool, addr: SocketAddr) -> (Reply, PoolMetrics) {
    for _ in 0..200 {
        let before = pool.metrics();
        let reply = scrape(addr);
        let after = pool.metrics();
        if settled(&before) == settled(&after) {
            return (reply, after);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the pool never became quiet");
}

#[test]
fn a_scrape_reports_what_the_pool_metrics_say() {
    let pool = pool();
    let cp = control(&pool);
    work(&pool);
    let addr = cp.serve_metrics(loopback()).unwrap();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);
    let (reply, m) = quiet_scrape(&pool, addr);

    assert_eq!(reply.status, 200, "{reply:?}");
    let ctype = &reply.headers["content-type"];
    assert!(
        ctype.starts_with("application/openmetrics-text"),
        "content type {ctype}"
    );
    assert!(reply.body.ends_with("# EOF\n"));
    let s = samples(&reply.body);

    // Steals by level, and their sum.
    assert_eq!(m.total.steals_by_level.len(), m.levels);
    let mut steals = 0.0;
    for (i, &n) in m.total.steals_by_level.iter().enumerate() {
        let v = value(&s, &format!("zonal_steals_total{{level=\"{}\"}}", roman(i)));
        assert_eq!(v, n as f64, "level {i}");
        steals += v;
    }
    assert_eq!(steals, m.total.migrations as f64);
    // Migrations: steals and (none yet) balance moves, by level.
    for i in 0..m.levels {
        let l = roman(i);
        let steal = format!("zonal_migrations_total{{level=\"{l}\",source=\"steal\"}}");
        assert_eq!(value(&s, &steal), m.total.steals_by_level[i] as f64);
        let balance = format!("zonal_migrations_total{{level=\"{l}\",source=\"balance\"}}");
        assert_eq!(value(&s, &balance), 0.0);
    }
    // Refusals by reason.
    for (reason, n) in m.total.refused.by_name() {
        let v = value(&s, &format!("zonal_refusals_total{{reason=\"{reason}\"}}"));
        assert_eq!(v, n as f64, "{reason}");
    }
    // Queues: every worker, with its node, empty now.
    for w in &m.workers {
        let q = format!(
            "zonal_queue_length{{worker=\"{}\",node=\"{}\"}}",
            w.worker.unwrap(),
            w.node.unwrap()
        );
        assert_eq!(value(&s, &q), 0.0);
    }
    assert!(m.total.tasks_run > 0);
    assert_eq!(value(&s, "zonal_tasks_run_total"), m.total.tasks_run as f64);
    assert_eq!(
        value(&s, "zonal_tasks_spawned_total"),
        m.tasks_spawned() as f64
    );
    assert_eq!(value(&s, "zonal_workers"), 32.0);
    let info = format!(
        "zonal_policy_info{{policy=\"{}\",levels=\"{}\",zone_depth=\"{}\"}}",
        m.policy, m.levels, m.zone_depth
    );
    assert_eq!(value(&s, &info), 1.0);
}

#[test]
fn the_turnaround_histogram_has_buckets_count_and_sum() {
    let pool = pool();
    let cp = control(&pool);
    work(&pool);
    let addr = cp.serve_metrics(loopback()).unwrap();
    let (reply, m) = quiet_scrape(&pool, addr);
    let body = &reply.body;
    assert!(body.contains("# TYPE zonal_task_turnaround_seconds histogram"));
    let buckets: Vec<(&str, f64)> = body
        .lines()
        .filter_map(|l| l.strip_prefix("zonal_task_turnaround_seconds_bucket{le=\""))
        .map(|l| {
            let (le, v) = l.split_once("\"} ").unwrap();
            (le, v.parse().unwrap())
        })
        .collect();
    assert_eq!(buckets.len(), m.turnaround.upper_bounds_ns.len() + 1);
    let (last, inf) = buckets.last().unwrap();
    assert_eq!(*last, "+Inf");
    // Bounds ascend, counts are cumulative, and +Inf is the count.
    for w in buckets.windows(2) {
        assert!(w[0].1 <= w[1].1, "{w:?}");
    }
    for ((le, _), b) in buckets[..buckets.len() - 1]
        .iter()
        .zip(&m.turnaround.upper_bounds_ns)
    {
        let le: f64 = le.parse().unwrap();
        assert!(
            (le - *b as f64 / 1e9).abs() <= 1e-12 * le.max(1.0),
            "{le} vs {b} ns"
        );
    }
    let s = samples(body);
    let count = value(&s, "zonal_task_turnaround_seconds_count");
    assert_eq!(*inf, count);
    assert_eq!(count, m.turnaround.count as f64);
    let sum = value(&s, "zonal_task_turnaround_seconds_sum");
    assert!((sum - m.turnaround.sum_seconds()).abs() <= 1e-9 * sum.max(1.0));
}

#[test]
fn the_queue_gauge_shows_tasks_waiting_for_a_busy_worker() {
    let pool = pool();
    let cp = control(&pool);
    let addr = cp.serve_metrics(loopback()).unwrap();
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel::<()>();
    pool.spawn_pinned(3, move || {
        started_tx.send(()).unwrap();
        gate.recv().unwrap();
    });
    started.recv().unwrap();
    let (done_tx, done) = mpsc::channel();
    for _ in 0..7 {
        let done_tx = done_tx.clone();
        pool.spawn_pinned(3, move || done_tx.send(()).unwrap());
    }
    let node = pool.worker_node(3).0;
    let s = samples(&scrape(addr).body);
    let q = format!("zonal_queue_length{{worker=\"3\",node=\"{node}\"}}");
    assert_eq!(value(&s, &q), 7.0);
    assert_eq!(
        value(&s, "zonal_queue_length{worker=\"0\",node=\"0\"}"),
        0.0
    );
    release.send(()).unwrap();
    for _ in 0..7 {
        done.recv().unwrap();
    }
    assert_eq!(value(&samples(&scrape(addr).body), &q), 0.0);
}

#[test]
fn non_loopback_addresses_are_refused_by_default() {
    let pool = pool();
    let cp = control(&pool);
    for a in ["0.0.0.0:0", "[::]:0", "192.168.1.20:9100", "10.0.0.1:0"] {
        let addr: SocketAddr = a.parse().unwrap();
        let err = cp.serve_metrics(addr).unwrap_err();
        assert!(
            matches!(err, ServeError::NotLoopback { addr: got } if got == addr),
            "{a}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(&addr.to_string()), "{msg}");
        assert!(msg.contains("only loopback addresses"), "{msg}");
        assert!(msg.contains("ServeOptions::allow_remote"), "{msg}");
    }
}

#[test]
fn remote_addresses_are_served_when_allowed_explicitly() {
    let pool = pool();
    let cp = control(&pool);
    let opts = ServeOptions::default().allow_remote(true);
    let addr = cp
        .serve_metrics_with("0.0.0.0:0".parse().unwrap(), opts)
        .unwrap();
    assert!(addr.ip().is_unspecified());
    // Reached here through loopback.
    let local: SocketAddr = ([127, 0, 0, 1], addr.port()).into();
    let reply = scrape(local);
    assert_eq!(reply.status, 200);
    assert!(reply.body.contains("zonal_workers 32\n"));
}

#[test]
fn a_taken_address_is_a_bind_error_naming_it() {
    let pool = pool();
    let cp = control(&pool);
    let taken = std::net::TcpListener::bind(loopback()).unwrap();
    let addr = taken.local_addr().unwrap();
    let err = cp.serve_metrics(addr).unwrap_err();
    assert!(
        matches!(&err, ServeError::Bind { addr: a, .. } if *a == addr),
        "{err:?}"
    );
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

#[test]
fn other_paths_and_methods_are_refused() {
    let pool = pool();
    let cp = control(&pool);
    let addr = cp.serve_metrics(loopback()).unwrap();
    assert_eq!(request(addr, "GET", "/").status, 404);
    assert_eq!(request(addr, "GET", "/metricsx").status, 404);
    let post = request(addr, "POST", "/metrics");
    assert_eq!(post.status, 405);
    assert_eq!(post.headers["allow"], "GET");
    // Query strings are ignored.
    assert_eq!(request(addr, "GET", "/metrics?x=1").status, 200);
}

#[test]
fn several_endpoints_serve_the_same_pool() {
    let pool = pool();
    let cp = control(&pool);
    work(&pool);
    let a = cp.serve_metrics(loopback()).unwrap();
    let b = cp
        .serve_metrics("[::1]:0".parse().unwrap())
        .or_else(|e| match e {
            // A machine without IPv6: a second IPv4 endpoint instead.
            ServeError::Bind { .. } => cp.serve_metrics(loopback()),
            e => Err(e),
        });
    let b = b.unwrap();
    assert_ne!(a, b);
    for addr in [a, b] {
        let s = samples(&scrape(addr).body);
        assert!(value(&s, "zonal_tasks_run_total") > 0.0);
    }
}

/// A read that ended because the server closed the connection (an orderly close, or a
/// reset), not because it timed out.
fn closed(read: std::io::Result<usize>) {
    match read {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the connection was not closed: {e}"),
    }
}

#[test]
fn dropping_the_control_plane_stops_the_server() {
    let pool = pool();
    let cp = control(&pool);
    let addr = cp.serve_metrics(loopback()).unwrap();
    assert_eq!(scrape(addr).status, 200);
    // A client in the middle of a request, and an idle keep-alive connection: neither may
    // hold the drop.
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 12];
    idle.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    let (dropped_tx, dropped) = mpsc::channel();
    std::thread::spawn(move || {
        drop(cp);
        dropped_tx.send(()).unwrap();
    });
    dropped
        .recv_timeout(IO_TIMEOUT)
        .expect("dropping the control plane hung");

    // Both connections were closed, and nothing listens any more.
    half.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut rest = Vec::new();
    closed(half.read_to_end(&mut rest));
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    closed(idle.read_to_end(&mut Vec::new()));
    let err = TcpStream::connect(addr).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    // The pool itself is untouched.
    work(&pool);
}

/// A user's own hyper service on a user's tokio runtime, answering `/metrics` with a
/// `prometheus-client` registry of its own that holds the user's counter and the pool's
/// `PoolCollector`: both come out, and the pool's series are the built-in endpoint's.
#[test]
fn a_users_own_service_serves_the_pool_series_next_to_its_own() {
    use std::sync::Arc;

    use http_body_util::Full;
    use hyper::body::Bytes;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::registry::Registry;
    use zonal_runtime::{PoolCollector, METRICS_CONTENT_TYPE};

    let pool = pool();
    pool.par_for(0..10_000, 100, |_| {});
    let requests: Counter = Counter::default();
    let mut registry = Registry::default();
    registry.register("app_requests", "Requests served", requests.clone());
    registry.register_collector(Box::new(PoolCollector::new(pool.metrics_handle())));
    let registry = Arc::new(registry);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(loopback()))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            let (registry, requests) = (Arc::clone(&registry), requests.clone());
            let service = hyper::service::service_fn(move |_req| {
                requests.inc();
                let mut body = String::new();
                let reply =
                    prometheus_client::encoding::text::encode(&mut body, &registry).map(|()| {
                        let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
                        r.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static(METRICS_CONTENT_TYPE),
                        );
                        r
                    });
                async move { reply }
            });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(conn);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });

    let reply = scrape(addr);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["content-type"], METRICS_CONTENT_TYPE);
    let ours = samples(&reply.body);
    assert_eq!(value(&ours, "app_requests_total"), 1.0);
    assert!(value(&ours, "zonal_tasks_run_total") > 0.0);
    assert!(ours.contains_key("zonal_steals_total{level=\"I\"}"));

    // The same series as the control plane's endpoint (values move between scrapes).
    let cp = ControlPlane::start(pool.metrics_handle(), Duration::from_secs(1)).unwrap();
    let builtin = samples(&scrape(cp.serve_metrics(loopback()).unwrap()).body);
    let zonal: Vec<&String> = ours.keys().filter(|k| k.starts_with("zonal_")).collect();
    assert_eq!(zonal, builtin.keys().collect::<Vec<_>>());
}
