//! Async tasks on Zonal workers using tokio's reactor and timers (feature `tokio`):
//! - with no set-up, a task spawned inside a tokio runtime (as in `#[tokio::main]`) enters
//!   that runtime around its polls: `tokio::time::sleep` and a `tokio::net` TCP round trip
//!   work through `zonal_runtime::spawn_async` on the global pool, under a multi-thread and
//!   a current-thread runtime, and each task keeps its own spawner's runtime (the global
//!   pool outlives the runtimes of `#[tokio::test]`s);
//! - with `ThreadPoolBuilder::tokio_handle`: `tokio::time::sleep` completes, a `tokio::net`
//!   TCP round trip between two async tasks of the pool works, `tokio::spawn` from a task
//!   lands on the runtime;
//! - with neither, tokio's "no reactor" panic completes the task with a `JoinError` that
//!   names `tokio_handle`, while the worker lives on.
//!
//! Every join goes through `join_within`, whose deadline turns a hang into a failure.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use zonal_runtime::{JoinError, JoinHandle, ThreadPool, ThreadPoolBuilder};

/// A multi-thread tokio runtime (its worker drives the timers and sockets).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A small virtual pool (two workers on two nodes of `s1`), entering `handle` if given.
fn pool(handle: Option<tokio::runtime::Handle>) -> ThreadPool {
    let b = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 2])
        .no_policy();
    match handle {
        Some(h) => b.tokio_handle(h),
        None => b,
    }
    .build()
    .expect("pool")
}

/// Joins `h` on a helper thread; fails the test if it takes longer than a minute.
fn join_within<T: Send + 'static>(h: JoinHandle<T>) -> Result<T, JoinError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(h.join());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the task did not complete within a minute")
}

#[test]
fn tokio_sleep_completes_in_an_async_task() {
    let rt = runtime();
    let pool = pool(Some(rt.handle().clone()));
    let h = pool.spawn_async(async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        // Still on a worker of the pool after the wake.
        (zonal_runtime::current_thread_index().is_some(), 42)
    });
    assert_eq!(join_within(h).unwrap(), (true, 42));
    drop(pool);
}

#[test]
fn a_tcp_round_trip_between_two_async_tasks() {
    let rt = runtime();
    let pool = pool(Some(rt.handle().clone()));
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel::<SocketAddr>();

    let server = pool.spawn_async(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let _ = addr_tx.send(listener.local_addr()?);
        let (conn, _) = listener.accept().await?;
        let got = read_exactly(&conn, 5).await?;
        write_all(&conn, &got).await?; // echo
        Ok::<_, std::io::Error>(got)
    });
    let client = pool.spawn_async(async move {
        let addr = addr_rx
            .await
            .map_err(|_| std::io::Error::other("the server ended before it bound"))?;
        let conn = tokio::net::TcpStream::connect(addr).await?;
        write_all(&conn, b"hello").await?;
        read_exactly(&conn, 5).await
    });

    assert_eq!(join_within(client).unwrap().unwrap(), b"hello");
    assert_eq!(join_within(server).unwrap().unwrap(), b"hello");
    drop(pool);
}

/// Writes all of `buf` (tokio's `net` readiness API; no `io-util` needed).
async fn write_all(conn: &tokio::net::TcpStream, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        conn.writable().await?;
        match conn.try_write(buf) {
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads exactly `n` bytes.
async fn read_exactly(conn: &tokio::net::TcpStream, n: usize) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0; n];
    let mut at = 0;
    while at < n {
        conn.readable().await?;
        match conn.try_read(&mut out[at..]) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(k) => at += k,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[test]
fn tokio_spawn_from_a_task_runs_on_the_runtime() {
    let rt = runtime();
    let pool = pool(Some(rt.handle().clone()));
    let h = pool.spawn_async(async {
        let on_tokio = tokio::spawn(async { zonal_runtime::current_thread_index().is_some() });
        on_tokio.await.expect("tokio task")
    });
    // The tokio task ran on the runtime's thread, not on a worker of the pool.
    assert!(!join_within(h).unwrap());
    drop(pool);
}

#[test]
fn the_start_handler_runs_inside_the_runtime() {
    let rt = runtime();
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0])
        .no_policy()
        .tokio_handle(rt.handle().clone())
        .start_handler(move |_| {
            let inside = tokio::runtime::Handle::try_current().is_ok();
            let _ = tx.lock().map(|t| t.send(inside));
        })
        .build()
        .unwrap();
    assert!(rx.recv_timeout(Duration::from_secs(60)).unwrap());
    drop(pool);
}

#[test]
fn without_a_handle_tokio_panics_and_the_task_fails_with_a_join_error() {
    let pool = pool(None);
    let h = pool.spawn_async(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
    });
    let err = join_within(h).unwrap_err();
    assert!(err.is_panic(), "{err:?}");
    let payload = err.into_panic();
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(
        msg.starts_with(
            "no tokio runtime: call spawn_async inside one or give ThreadPoolBuilder::tokio_handle"
        ),
        "{msg}"
    );
    // tokio's own message follows.
    assert!(msg.contains("Tokio 1.x runtime"), "{msg}");
    let h = pool.spawn_async(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
    });
    let shown = join_within(h).unwrap_err().to_string();
    assert!(shown.contains("ThreadPoolBuilder::tokio_handle"), "{shown}");
    // The worker lives on, and the pool still runs tasks.
    assert_eq!(join_within(pool.spawn_async(async { 7 })).unwrap(), 7);
    // Outside any runtime context, as a worker without a handle.
    let h = pool.spawn_async(async { tokio::runtime::Handle::try_current().is_err() });
    assert!(join_within(h).unwrap());
}

// --- No set-up: the spawner's runtime ------------------------------------------------

/// A TCP round trip between two tasks spawned with `zonal_runtime::spawn_async` (the global
/// pool), awaited from the calling runtime; returns what the client read back.
async fn round_trip_on_the_global_pool() -> Vec<u8> {
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel::<SocketAddr>();
    let server = zonal_runtime::spawn_async(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let _ = addr_tx.send(listener.local_addr()?);
        let (conn, _) = listener.accept().await?;
        let got = read_exactly(&conn, 4).await?;
        write_all(&conn, &got).await?;
        Ok::<_, std::io::Error>(got)
    });
    let client = zonal_runtime::spawn_async(async move {
        let addr = addr_rx
            .await
            .map_err(|_| std::io::Error::other("the server ended before it bound"))?;
        let conn = tokio::net::TcpStream::connect(addr).await?;
        write_all(&conn, b"ping").await?;
        read_exactly(&conn, 4).await
    });
    let got = within_a_minute(client).await.unwrap().unwrap();
    assert_eq!(within_a_minute(server).await.unwrap().unwrap(), b"ping");
    got
}

/// Awaits `h` (a `JoinHandle` is a future), failing the test after a minute.
async fn within_a_minute<T: Send + 'static>(h: JoinHandle<T>) -> Result<T, JoinError> {
    tokio::time::timeout(Duration::from_secs(60), h)
        .await
        .expect("the task did not complete within a minute")
}

/// A timer, `tokio::spawn` and the worker the task ran on, from a task of the global pool.
async fn sleep_then_spawn_on_the_global_pool() -> (bool, bool) {
    let h = zonal_runtime::spawn_async(async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let on_worker = zonal_runtime::current_thread_index().is_some();
        let spawned = tokio::spawn(async { 7 }).await.expect("tokio task") == 7;
        (on_worker, spawned)
    });
    within_a_minute(h).await.unwrap()
}

#[test]
fn inside_a_multi_thread_runtime_spawn_async_needs_no_set_up() {
    // What `#[tokio::main]` builds.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        assert_eq!(sleep_then_spawn_on_the_global_pool().await, (true, true));
        assert_eq!(round_trip_on_the_global_pool().await, b"ping");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn under_tokio_test_spawn_async_needs_no_set_up() {
    assert_eq!(sleep_then_spawn_on_the_global_pool().await, (true, true));
    assert_eq!(round_trip_on_the_global_pool().await, b"ping");
}

/// `#[tokio::test]`'s default runtime: timers, sockets and `tokio::spawn` work while the
/// runtime's thread awaits the task's `JoinHandle` (it drives the timers and I/O then).
#[tokio::test]
async fn under_a_current_thread_runtime_awaited_tasks_use_its_timers_and_sockets() {
    assert_eq!(sleep_then_spawn_on_the_global_pool().await, (true, true));
    assert_eq!(round_trip_on_the_global_pool().await, b"ping");
}

#[test]
fn each_task_keeps_the_runtime_it_was_spawned_in() {
    // A first runtime, used and dropped (as one `#[tokio::test]` ends before the next).
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let first_id = first.handle().id();
    let seen = first.block_on(async {
        let h = zonal_runtime::spawn_async(async { tokio::runtime::Handle::current().id() });
        within_a_minute(h).await.unwrap()
    });
    assert_eq!(seen, first_id);
    drop(first);

    // The global pool lives on; a task spawned in a second runtime uses that one.
    let second = runtime();
    let second_id = second.handle().id();
    let (seen, slept) = second.block_on(async {
        let h = zonal_runtime::spawn_async(async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            let id = tokio::runtime::Handle::current().id();
            // A task spawned by a task inherits the runtime its parent's poll entered.
            let child = zonal_runtime::spawn_async(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                tokio::runtime::Handle::current().id()
            });
            (id, child.await.unwrap())
        });
        within_a_minute(h).await.unwrap()
    });
    assert_eq!((seen, slept), (second_id, second_id));
}

#[test]
fn a_pool_given_a_handle_keeps_it_for_tasks_spawned_in_another_runtime() {
    let given = runtime();
    let given_id = given.handle().id();
    let pool = pool(Some(given.handle().clone()));
    let other = runtime();
    let seen = other.block_on(async {
        let h = pool.spawn_async(async { tokio::runtime::Handle::current().id() });
        within_a_minute(h).await.unwrap()
    });
    assert_eq!(seen, given_id);
    drop(pool);
}
