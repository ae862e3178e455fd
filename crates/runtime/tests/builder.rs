//! Builder errors: each names the offending input. (Pinning has its own binary.)

use zonal_runtime::{Placement, ThreadPoolBuilder};

#[test]
fn unknown_preset_is_named() {
    let e = ThreadPoolBuilder::new().preset("s9").build().unwrap_err();
    assert!(e.to_string().contains("s9"), "{e}");
}

#[test]
fn unknown_policy_lists_the_valid_ones() {
    let e = ThreadPoolBuilder::new()
        .preset("s1")
        .policy_name("fastest")
        .build()
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("fastest") && msg.contains("conservative-hard"),
        "{msg}"
    );
}

#[test]
fn missing_xml_file_is_named() {
    let e = ThreadPoolBuilder::new()
        .xml_file("/nonexistent/machine.xml")
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/machine.xml"), "{e}");
}

#[test]
fn cpu_outside_the_affinity_mask_is_named() {
    let e = ThreadPoolBuilder::new()
        .worker_cpus([0, 7777])
        .no_policy()
        .build()
        .unwrap_err();
    assert_eq!(e.cpu(), Some(7777));
    assert!(
        e.to_string()
            .contains("CPU 7777 is not in this process's affinity mask"),
        "{e}"
    );
}

#[test]
fn cpu_outside_a_virtual_topology_is_named() {
    let e = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .worker_cpus([99])
        .build()
        .unwrap_err();
    assert_eq!(e.cpu(), Some(99));
    assert!(
        e.to_string()
            .contains("CPU 99 is not a CPU of the topology"),
        "{e}"
    );
}

#[test]
fn zero_workers_per_node_is_refused() {
    let e = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(0)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("workers_per_node(0)"), "{e}");
}

#[test]
fn a_preset_is_virtual_and_unpinned_by_default() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(1)
        .build()
        .unwrap();
    assert!(pool.is_virtual());
    assert_eq!(pool.placement(), Placement::Unpinned);
    assert_eq!(pool.num_workers(), 16);
    assert_eq!(pool.worker_nodes().len(), 16);
}

#[test]
fn handlers_and_names_apply() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (starts, exits) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, x) = (Arc::clone(&starts), Arc::clone(&exits));
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .workers_per_node(1)
        .thread_name(|i| format!("zt-{i}"))
        .stack_size(1 << 20)
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            x.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let name = pool.install(|| std::thread::current().name().map(str::to_owned));
    assert!(name.unwrap().starts_with("zt-"));
    pool.shutdown_and_wait();
    assert_eq!(starts.load(Ordering::SeqCst), 16);
    assert_eq!(exits.load(Ordering::SeqCst), 16);
}

#[test]
fn panics_resume_in_the_caller_and_workers_survive() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.join(|| 1, || panic!("in b"))
    }));
    assert!(r.is_err());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| s.spawn(|_| panic!("in scope")))
    }));
    assert!(r.is_err());
    assert_eq!(pool.install(|| 40 + 2), 42);
    let (tx, rx) = std::sync::mpsc::channel();
    for w in 0..pool.num_workers() {
        let tx = tx.clone();
        pool.spawn_pinned(w, move || {
            tx.send(zonal_runtime::current_worker_index()).unwrap()
        });
    }
    let mut seen: Vec<usize> = (0..pool.num_workers())
        .map(|_| rx.recv().unwrap().unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..pool.num_workers()).collect::<Vec<_>>());
}

#[test]
fn shutdown_and_wait_finishes_every_spawned_task() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let n = Arc::new(AtomicUsize::new(0));
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    for i in 0..10_000u32 {
        let n = Arc::clone(&n);
        pool.spawn_on(zonal_topology::NodeId(i % 16), move || {
            n.fetch_add(1, Ordering::Relaxed);
        });
    }
    pool.shutdown_and_wait();
    assert_eq!(n.load(Ordering::Relaxed), 10_000);
}

#[test]
fn a_worker_thread_that_cannot_start_is_a_failure_not_an_input_error() {
    // No system gives a thread an exabyte of stack: the spawn fails, the workers already
    // started are stopped, and the error says which worker, as a failure of the system.
    let err = ThreadPoolBuilder::new()
        .preset("s1")
        .stack_size(1 << 60)
        .build()
        .expect_err("an exabyte stack cannot be spawned");
    assert!(!err.is_input_error(), "{err}");
    assert!(
        err.to_string().contains("cannot spawn worker thread"),
        "{err}"
    );
    // The same builder with a topology that cannot load is an input error.
    let err = ThreadPoolBuilder::new()
        .preset("no-such-preset")
        .build()
        .expect_err("unknown preset");
    assert!(err.is_input_error(), "{err}");
}
