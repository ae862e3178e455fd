//! Builder errors: each names the offending input. (Pinning has its own binary.)

use zonal_runtime::{Pinning, ThreadPoolBuilder};

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

/// Without the `hwloc` feature an XML export is refused, naming the file and the feature.
#[cfg(not(feature = "hwloc"))]
#[test]
fn xml_without_hwloc_names_the_feature() {
    let e = ThreadPoolBuilder::new()
        .xml_file("/some/machine.xml")
        .build()
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("/some/machine.xml") && msg.contains("`hwloc` feature"),
        "{msg}"
    );
    assert!(e.is_input_error());
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
    assert_eq!(pool.pinning(), Pinning::Unpinned);
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
    assert_eq!(err.worker(), Some(0));
    // The same builder with a topology that cannot load is an input error.
    let err = ThreadPoolBuilder::new()
        .preset("no-such-preset")
        .build()
        .expect_err("unknown preset");
    assert!(err.is_input_error(), "{err}");
}

/// Counts the workers that start and exit through the builder's handlers.
fn counted(b: ThreadPoolBuilder) -> (ThreadPoolBuilder, Counts) {
    use std::sync::atomic::Ordering;
    let counts = Counts::default();
    let (s, x) = (
        std::sync::Arc::clone(&counts.0),
        std::sync::Arc::clone(&counts.1),
    );
    let b = b
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            x.fetch_add(1, Ordering::SeqCst);
        });
    (b, counts)
}

/// Workers started, workers exited.
#[derive(Default)]
struct Counts(
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
);

impl Counts {
    fn get(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering;
        (self.0.load(Ordering::SeqCst), self.1.load(Ordering::SeqCst))
    }
}

#[test]
fn stacks_no_system_can_give_are_a_typed_error_naming_the_worker_and_the_os_error() {
    // 2^63 bytes (more than any address space) and usize::MAX (which overflows glibc's
    // size arithmetic): std::thread::Builder::spawn fails, build returns the OS's error.
    for stack in [usize::MAX / 2, usize::MAX] {
        let (b, counts) = counted(ThreadPoolBuilder::new().preset("s1").no_policy());
        let err = b.stack_size(stack).build().expect_err("no such stack");
        assert_eq!(err.worker(), Some(0), "{err}");
        assert!(!err.is_input_error(), "{err}");
        let os = std::error::Error::source(&err)
            .and_then(|e| e.downcast_ref::<std::io::Error>())
            .expect("the OS's error is the source");
        assert!(os.raw_os_error().is_some(), "{os:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("worker thread 0 of 32") && msg.contains("os error"),
            "{msg}"
        );
        assert_eq!(counts.get(), (0, 0));
    }
}

#[test]
fn a_thread_name_with_a_nul_byte_is_refused_after_joining_the_started_workers() {
    // std::thread::Builder::spawn panics on such a name: it is refused before, naming the
    // worker, and the three workers already started are stopped and joined.
    let (b, counts) = counted(ThreadPoolBuilder::new().preset("s1").no_policy());
    let err = b
        .thread_name(|i| {
            if i == 3 {
                "bad\0name".into()
            } else {
                format!("w{i}")
            }
        })
        .build()
        .expect_err("a NUL byte in a thread name");
    assert_eq!(err.worker(), Some(3));
    assert!(err.is_input_error(), "{err}");
    assert!(err.to_string().contains("bad\\0name"), "{err}");
    assert_eq!(counts.get(), (3, 3), "every started worker ran and exited");
}

#[test]
fn a_panicking_thread_name_callback_resumes_after_joining_the_started_workers() {
    let (b, counts) = counted(ThreadPoolBuilder::new().preset("s1").no_policy());
    let b = b.thread_name(|i| {
        assert!(i < 5, "no name for worker {i}");
        format!("w{i}")
    });
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.build()))
        .map(|_| ())
        .expect_err("the callback's panic resumes");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(msg.contains("no name for worker 5"), "{msg}");
    assert_eq!(counts.get(), (5, 5), "every started worker ran and exited");
}
