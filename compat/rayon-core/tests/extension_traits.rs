//! Extension traits on rayon-core's types resolve here as they do on rayon.
//!
//! A published crate may add methods to rayon's `ThreadPool` or `Scope` with a trait of its
//! own. Zonal's types have methods rayon's lack (38 on `ThreadPool`, 4 more on `Scope`, 15
//! on the builder, 8 on the build error); had this package exported Zonal's types
//! themselves, each name would be a collision: an inherent method wins method resolution
//! over a trait's, whatever its arguments, so `pool.spawn_async(|| ..)` would call Zonal's
//! `spawn_async<F: Future>` and fail to compile (E0277 "is not a future"). Each trait below
//! has one method per Zonal-only name, returning that name: every call compiles only if no
//! inherent method of that name exists, and the test checks that the trait's method is the
//! one that ran. Zonal's own methods stay reachable through `AsZonal` (the last tests).

use std::sync::mpsc;

use rayon_core::{AsZonal, Scope, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// Defines trait `$trait` on `$ty` with a method per name (each returns its own name), and
/// `$calls`, which calls every one on a value with method-call syntax, as a user writes it.
macro_rules! name_trait {
    ($trait:ident, $calls:ident, $ty:ty: $($name:ident),* $(,)?) => {
        trait $trait {
            $(fn $name(&self) -> &'static str;)*
        }
        impl $trait for $ty {
            $(fn $name(&self) -> &'static str { stringify!($name) })*
        }
        /// (what the call returned, the name called), one per name.
        fn $calls(v: &$ty) -> Vec<(&'static str, &'static str)> {
            vec![$((v.$name(), stringify!($name))),*]
        }
    };
}

// Every public method of `zonal::ThreadPool` that rayon-core's `ThreadPool` lacks, but
// `spawn_async`, which `SpawnAsync` below defines as a published crate does.
name_trait!(PoolNames, pool_calls, ThreadPool:
    spawn_with, try_spawn_with, spawn_on, try_spawn_on, spawn_pinned, try_spawn_pinned,
    current_worker_index, num_workers, topology, policy_name, set_policy, set_policy_config,
    set_policy_object, balance_now, spawn_away, balance_at, pinning, unpinned_workers,
    extra_workers, is_virtual, is_topology_discovered, pin_fallback_workers, local_share,
    worker_node, worker_nodes, metrics, metrics_handle, shutdown_and_wait,
    spawn_async_with, try_spawn_async_with, spawn_handle, node_workers, par_for, par_chunks,
    par_chunks_mut, node_partition, par_reduce,
);

// `zonal::Scope`'s methods that rayon-core's `Scope` lacks.
name_trait!(ScopeNames, scope_calls, Scope<'_>:
    spawn_with, try_spawn_with, spawn_on, try_spawn_on,
);

// `zonal::ThreadPoolBuilder`'s options that rayon-core's builder lacks (its `tokio_handle`
// exists with Zonal's `tokio` feature, which this package does not turn on; named anyway).
name_trait!(BuilderNames, builder_calls, ThreadPoolBuilder:
    topology, preset, xml_file, nodes_file, policy_name, policy_config, policy, no_policy,
    worker_cpus, local_ranks, workers_per_node, pin, virtual_pinning, tokio_handle,
    steal_observer,
);

// `zonal::BuildError`'s methods; rayon-core's error has no inherent public method.
name_trait!(ErrorNames, error_calls, ThreadPoolBuildError:
    cpu, is_input_error, worker, is_global_pool_already_initialized,
    is_current_thread_already_in_pool, num_threads, is_pinning_error, launcher_error,
);

/// As a published crate wrote it for rayon: `spawn_async` taking a closure, its result
/// coming back on a channel. On Zonal's own `ThreadPool` this call would not compile.
trait SpawnAsync {
    fn spawn_async<F, R>(&self, f: F) -> mpsc::Receiver<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static;
}

impl SpawnAsync for ThreadPool {
    fn spawn_async<F, R>(&self, f: F) -> mpsc::Receiver<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        self.spawn(move || {
            let _ = tx.send(f());
        });
        rx
    }
}

fn pool() -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(2).build().unwrap()
}

fn assert_all_resolve_to_the_trait(calls: Vec<(&'static str, &'static str)>, expected: usize) {
    assert_eq!(calls.len(), expected);
    for (returned, called) in calls {
        assert_eq!(
            returned, called,
            "`{called}` did not resolve to the trait's method"
        );
    }
}

#[test]
fn a_spawn_async_taking_a_closure_resolves_to_the_extension_trait() {
    let pool = pool();
    let rx = pool.spawn_async(|| rayon_core::current_thread_index().map(|_| 6 * 7));
    assert_eq!(rx.recv().unwrap(), Some(42), "ran on a worker of the pool");
}

#[test]
fn every_zonal_only_pool_method_name_resolves_to_the_extension_trait() {
    assert_all_resolve_to_the_trait(pool_calls(&pool()), 37);
}

#[test]
fn every_zonal_only_scope_method_name_resolves_to_the_extension_trait() {
    let here = pool().scope(|s| scope_calls(s));
    assert_all_resolve_to_the_trait(here, 4);
    let from_task = pool().scope(|s| {
        let (tx, rx) = mpsc::channel();
        s.spawn(move |s| tx.send(scope_calls(s)).unwrap());
        rx
    });
    assert_all_resolve_to_the_trait(from_task.recv().unwrap(), 4);
    let in_place = rayon_core::in_place_scope(|s| scope_calls(s));
    assert_all_resolve_to_the_trait(in_place, 4);
}

#[test]
fn every_zonal_only_builder_and_error_method_name_resolves_to_the_extension_trait() {
    assert_all_resolve_to_the_trait(builder_calls(&ThreadPoolBuilder::new()), 15);
    // A worker cannot become worker 0 of another pool.
    let err = pool()
        .install(|| {
            ThreadPoolBuilder::new()
                .num_threads(1)
                .use_current_thread()
                .build()
        })
        .unwrap_err();
    assert_all_resolve_to_the_trait(error_calls(&err), 8);
    // Zonal's error is under it.
    assert!(err.as_zonal().is_current_thread_already_in_pool(), "{err}");
}

#[test]
fn zonals_methods_are_reachable_through_as_zonal() {
    let pool = pool();
    let zonal_pool = pool.as_zonal();
    assert_eq!(zonal_pool.num_workers(), 2);
    let node = zonal_pool.worker_node(0);
    let ran_on = pool.scope(|s| {
        let (tx, rx) = mpsc::channel();
        s.as_zonal().spawn_on(node, move |_| {
            tx.send(zonal::runtime::current_node()).unwrap()
        });
        rx
    });
    assert!(ran_on.recv().unwrap().is_some(), "ran on a worker");
    // Zonal's spawn_async, with a future, through the same accessor.
    let h = zonal_pool.spawn_async(async { 6 * 7 });
    assert_eq!(h.join().unwrap(), 42);
    let tasks: u64 = zonal_pool
        .metrics()
        .workers
        .iter()
        .map(|w| w.tasks_run)
        .sum();
    assert!(tasks > 0, "the metrics count the tasks run");
}

#[test]
fn pools_and_builders_convert_both_ways() {
    let zonal_builder = zonal::ThreadPoolBuilder::new().preset("s2").no_policy();
    let pool: ThreadPool = ThreadPoolBuilder::from(zonal_builder).build().unwrap();
    assert!(pool.as_zonal().is_virtual(), "Zonal's options kept");
    assert_eq!(
        pool.install(rayon_core::current_num_threads),
        pool.current_num_threads()
    );
    let back: zonal::ThreadPool = pool.into();
    assert_eq!(back.install(|| back.join(|| 1, || 2)), (1, 2));
    let again = ThreadPool::from(back);
    assert_eq!(again.join(|| 3, || 4), (3, 4));
}

#[test]
fn a_count_above_the_maximum_is_reduced_to_it_as_in_rayon() {
    // Only the builder is checked: a pool of that many workers is not built.
    let max = rayon_core::max_num_threads();
    let reduced = format!("{:?}", ThreadPoolBuilder::new().num_threads(max + 1));
    let at_max = format!("{:?}", ThreadPoolBuilder::new().num_threads(max));
    assert_eq!(reduced, at_max);
    assert!(
        reduced.contains(&format!("num_threads: Some({max})")),
        "{reduced}"
    );
}
