//! Behaviour of the public API on virtual topologies (no pinning, no process-wide state).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use zonal_runtime::{MemoryBinding, NodeBuffer, TaskOptions, ThreadPoolBuilder};
use zonal_topology::{presets, NodeId};

/// s1 with a zone of one level: nothing ever leaves its node.
fn node_locked_pool() -> zonal_runtime::ThreadPool {
    let topo = presets::preset("s1").unwrap().with_zone_depth(1);
    ThreadPoolBuilder::new()
        .topology(topo)
        .policy(Arc::new(common::MiniConservative { age_limit: 100 }))
        .build()
        .unwrap()
}

#[test]
fn spawn_on_runs_on_the_node_when_nothing_may_leave_it() {
    let pool = node_locked_pool();
    let (tx, rx) = mpsc::channel();
    for i in 0..1_000u32 {
        let tx = tx.clone();
        let node = NodeId(i % 16);
        pool.spawn_on(node, move || {
            tx.send((node, zonal_runtime::current_node().unwrap()))
                .unwrap();
        });
    }
    drop(tx);
    let mut n = 0;
    for (want, got) in rx {
        assert_eq!(want, got);
        n += 1;
    }
    assert_eq!(n, 1_000);
    let m = pool.metrics();
    assert_eq!(m.total.steals_by_level[1..].iter().sum::<u64>(), 0);
}

#[test]
fn origin_and_continuations_are_carried() {
    let pool = node_locked_pool();
    let (tx, rx) = mpsc::channel();
    pool.spawn_with(
        TaskOptions::new().origin(NodeId(5)).group(9).weight(2048),
        move || {
            let first = zonal_runtime::current_task().unwrap();
            zonal_runtime::spawn_with(TaskOptions::new().continuation(), move || {
                tx.send((first, zonal_runtime::current_task().unwrap()))
                    .unwrap();
            });
        },
    );
    let (first, cont) = rx.recv().unwrap();
    assert_eq!(first.origin, NodeId(5));
    assert_eq!(first.group, Some(9));
    assert_eq!(first.weight, 2048);
    assert_eq!(cont.origin, NodeId(5));
    assert_eq!(cont.group, Some(9));
}

#[test]
fn par_loops_cover_every_index_once() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    let hits: Vec<AtomicUsize> = (0..100_000).map(|_| AtomicUsize::new(0)).collect();
    pool.par_for(0..hits.len(), 64, |r| {
        for i in r {
            hits[i].fetch_add(1, Ordering::Relaxed);
        }
    });
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    let mut v = vec![0u32; 10_007];
    pool.par_chunks_mut(&mut v, 100, |off, c| {
        for (k, x) in c.iter_mut().enumerate() {
            *x = (off + k) as u32;
        }
    });
    assert!(v.iter().enumerate().all(|(i, &x)| x as usize == i));
    let s = pool.par_reduce(
        0..v.len(),
        33,
        || 0u64,
        |r| v[r].iter().map(|&x| u64::from(x)).sum(),
        |a, b| a + b,
    );
    assert_eq!(s, (0..10_007u64).sum::<u64>());
    let total = AtomicUsize::new(0);
    pool.par_chunks(&v, 1000, |_, c| {
        total.fetch_add(c.len(), Ordering::Relaxed);
    });
    assert_eq!(total.into_inner(), v.len());
}

#[test]
fn metrics_balance_at_quiescence() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .policy(Arc::new(common::MiniConservative { age_limit: 2 }))
        .build()
        .unwrap();
    pool.par_for(0..50_000, 16, |_| {});
    pool.scope(|s| {
        for i in 0..1000u32 {
            s.spawn_on(NodeId(i % 16), |_| {});
        }
    });
    let m = pool.metrics();
    assert_eq!(m.tasks_spawned(), m.total.tasks_run, "{m:#?}");
    assert_eq!(
        m.total.migrations,
        m.total.steals_by_level.iter().sum::<u64>()
    );
    assert_eq!(m.workers.len(), 32);
    let json = serde_json::to_value(&m).unwrap();
    assert!(json["total"]["refused"]["zone"].is_u64());
}

#[test]
fn node_buffer_says_which_path_it_took() {
    // This machine, unpinned (pinning belongs to tests/pinning.rs).
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .pin(false)
        .build()
        .unwrap();
    let node = pool.worker_nodes()[0];
    let buf = NodeBuffer::new_in(&pool, node, 4096, |i| i as u32);
    assert_eq!(buf.len(), 4096);
    assert_eq!(buf[4095], 4095);
    // On Linux the buffer is bound before its first touch, on one node as on many, and the
    // kernel says so; elsewhere it falls back to first touch and says why.
    match buf.binding() {
        MemoryBinding::Bound => {
            let os_id = pool.topology().machine().node(node).os_id;
            let k = buf.kernel_policy().unwrap();
            assert_eq!(
                (k.mode, k.nodes),
                (zonal_runtime::os::PolicyMode::Bind, vec![os_id])
            );
            assert!(buf.page_nodes().unwrap().iter().all(|p| *p == Ok(os_id)));
        }
        MemoryBinding::FirstTouch(why) => {
            assert!(!cfg!(target_os = "linux") && !why.is_empty(), "{why}")
        }
        other => panic!("unexpected binding {other:?} on this machine"),
    }
}

#[test]
fn nested_pools_and_install_from_workers() {
    let a = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(1)
        .build()
        .unwrap();
    let b = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(1)
        .build()
        .unwrap();
    let r = a.install(|| {
        let inner =
            b.install(|| b.current_worker_index().is_some() && a.current_worker_index().is_none());
        inner && a.current_worker_index().is_some()
    });
    assert!(r);
}

/// A worker that installs work on another pool keeps running its own pool's tasks while it
/// waits. Here the other pool's job waits for a task only that worker can run (a one-worker
/// pool): a blocked worker would never run it, and the job would give up.
#[test]
fn install_on_another_pool_keeps_the_worker_working() {
    let one = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .worker_cpus([0])
        .build()
        .unwrap();
    let other = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(1)
        .build()
        .unwrap();
    let flag = Arc::new(AtomicUsize::new(0));
    let seen = one.install(|| {
        let f = Arc::clone(&flag);
        one.spawn(move || f.store(1, Ordering::SeqCst));
        other.install(|| {
            // Bounded, so that a regression fails instead of hanging; the outcome does not
            // depend on timing: the task can only run once `one`'s worker looks for work.
            for _ in 0..200_000 {
                if flag.load(Ordering::SeqCst) == 1 {
                    return true;
                }
                std::thread::yield_now();
            }
            false
        })
    });
    assert!(seen, "the waiting worker ran its own pool's task");
}

#[test]
fn work_aimed_at_a_node_without_workers_still_runs() {
    // Workers on node 0 only, zone of one level: node 9's injector would be out of reach.
    let topo = presets::preset("s1").unwrap().with_zone_depth(1);
    let pool = ThreadPoolBuilder::new()
        .topology(topo)
        .policy(Arc::new(common::MiniConservative { age_limit: 100 }))
        .worker_cpus([0, 1])
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    pool.spawn_on(NodeId(9), move || {
        tx.send(zonal_runtime::current_task().unwrap().origin)
            .unwrap()
    });
    pool.install(|| {
        zonal_runtime::scope(|s| {
            s.spawn_on(NodeId(9), move |_| tx2.send(NodeId(9)).unwrap());
        })
    });
    assert_eq!(rx.recv().unwrap(), NodeId(9));
    assert_eq!(rx.recv().unwrap(), NodeId(9));
}

/// Places the pool does not have are typed errors (the `try_` forms) and nothing is queued;
/// the plain forms panic with the same message.
#[test]
fn spawning_to_a_place_the_pool_lacks_is_an_error() {
    use zonal_runtime::SpawnError;
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    assert_eq!(
        pool.try_spawn_on(NodeId(16), move || {
            r.fetch_add(1, Ordering::SeqCst);
        }),
        Err(SpawnError::UnknownNode {
            node: NodeId(16),
            nodes: 16
        })
    );
    assert_eq!(
        pool.try_spawn_pinned(32, || ()),
        Err(SpawnError::UnknownWorker {
            worker: 32,
            workers: 32
        })
    );
    let far = TaskOptions::new().origin(NodeId(400));
    assert!(matches!(
        pool.try_spawn_with(far, || ()),
        Err(SpawnError::UnknownNode { .. })
    ));
    pool.scope(|s| {
        assert!(s.try_spawn_on(NodeId(17), |_| ()).is_err());
        assert!(s.try_spawn_with(far, |_| ()).is_err());
        assert_eq!(s.try_spawn_on(NodeId(15), |_| ()), Ok(()));
    });
    assert!(zonal_runtime::NodeBuffer::try_new_in(&pool, NodeId(16), 4, |i| i).is_err());
    let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.spawn_on(NodeId(16), || ())
    }))
    .unwrap_err();
    assert!(msg
        .downcast_ref::<String>()
        .is_some_and(|m| m.contains("node 16 is not a node")));
    pool.shutdown_and_wait();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "a refused task never runs");
    assert_eq!(
        SpawnError::UnknownWorker {
            worker: 3,
            workers: 2
        }
        .to_string(),
        "worker 3 is out of range (the pool has 2 workers)"
    );
}

/// Job memory (`job_memory_bytes`) grows with a burst of spawns and goes back once the
/// worker has parked twice with no burst in between: a pool does not keep a burst's memory
/// for ever.
#[test]
fn job_memory_goes_back_after_a_burst() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .worker_cpus([0])
        .build()
        .unwrap();
    let hits = AtomicUsize::new(0);
    let during = pool.scope(|s| {
        for _ in 0..100_000 {
            s.spawn(|_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
        }
        // One worker: every job is still queued here.
        pool.metrics().total.job_memory_bytes
    });
    assert_eq!(hits.load(Ordering::Relaxed), 100_000);
    assert!(
        during >= 100_000 * 32,
        "a 32-byte block per queued job: {during} bytes"
    );
    // Small jobs wake the worker, which parks again after each: from its second park on,
    // the burst's slabs are gone. Bounded, so that a regression fails instead of hanging;
    // nothing here depends on how long a park takes.
    let mut after = u64::MAX;
    for _ in 0..10_000 {
        pool.install(|| ());
        after = pool.metrics().total.job_memory_bytes;
        if after <= 64 << 10 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(after <= 64 << 10, "kept {after} bytes of {during}");
}
