//! What a new user trips on, fixed: `pin(true)` on a virtual pool is a typed error (not a
//! silently unpinned pool), the metrics' total prints no sentinel values, and `spawn_on`
//! takes a node's index as a plain integer.

use std::sync::mpsc;
use std::time::Duration;

use zonal_runtime::{Pinning, ThreadPoolBuilder, VirtualPinning};
use zonal_topology::NodeId;

#[test]
fn pin_true_on_a_virtual_pool_is_a_pinning_error_naming_the_topology() {
    let err = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .pin(true)
        .build()
        .unwrap_err();
    assert!(err.is_pinning_error(), "{err}");
    assert!(err.is_input_error(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("pin(true) on a virtual pool")
            && msg.contains("\"s1\"")
            && msg.contains("VirtualPinning::Spread"),
        "{msg}"
    );
}

#[test]
fn pin_true_with_a_spread_or_unset_pin_still_builds() {
    // Unset: a virtual pool runs unpinned, as before.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    assert_eq!(pool.pinning(), Pinning::Unpinned);
    // `pin(false)`: the same.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .pin(false)
        .build()
        .unwrap();
    assert_eq!(pool.pinning(), Pinning::Unpinned);
    // Spread asks for bindings: `pin(true)` requires them (they hold on this machine).
    #[cfg(target_os = "linux")]
    {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .virtual_pinning(VirtualPinning::Spread)
            .pin(true)
            .build()
            .unwrap();
        assert_eq!(pool.pinning(), Pinning::Spread);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = VirtualPinning::Spread;
}

#[test]
fn the_total_has_no_worker_cpu_or_node() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 2])
        .no_policy()
        .build()
        .unwrap();
    assert_eq!(pool.install(|| zonal_runtime::join(|| 1, || 2)), (1, 2));
    let m = pool.metrics();
    assert_eq!(
        (m.total.worker, m.total.cpu, m.total.node),
        (None, None, None)
    );
    let ids: Vec<_> = m
        .workers
        .iter()
        .map(|w| (w.worker, w.cpu, w.node))
        .collect();
    assert_eq!(
        ids,
        [(Some(0), Some(0), Some(0)), (Some(1), Some(2), Some(1))]
    );
    let shown = format!("{:?}", m.total);
    assert!(
        shown.contains("worker: None, cpu: None, node: None"),
        "{shown}"
    );
    for sentinel in [usize::MAX.to_string(), u32::MAX.to_string()] {
        assert!(!shown.contains(&sentinel), "{shown}");
    }
    // Serialised (feature `serde`): null, not a sentinel.
    let json = serde_json::to_value(&m).unwrap();
    assert!(json["total"]["worker"].is_null() && json["total"]["node"].is_null());
    assert_eq!(json["workers"][1]["node"], 1);
}

#[test]
fn spawn_on_takes_a_nodes_index_as_an_integer() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    pool.spawn_on(3, move || {
        tx.send(zonal_runtime::current_task().map(|t| t.origin))
            .unwrap()
    });
    pool.spawn_on(NodeId(5), move || {
        tx2.send(zonal_runtime::current_task().map(|t| t.origin))
            .unwrap()
    });
    let mut got = [
        rx.recv_timeout(Duration::from_secs(60)).unwrap(),
        rx.recv_timeout(Duration::from_secs(60)).unwrap(),
    ];
    got.sort();
    assert_eq!(got, [Some(NodeId(3)), Some(NodeId(5))]);
    pool.scope(|s| s.spawn_on(2, |_| {}));
    assert!(pool.try_spawn_on(NodeId(99), || {}).is_err());
}
