//! The handle to a pool that any thread may hold ([`MetricsHandle`]): metrics snapshots and
//! balancing passes, all the control plane (`control/`) needs, over the pool's public
//! interface (no access to the registry itself). Also the registry's metrics snapshot.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::balance::{self, PassReport};
use crate::metrics::{PoolFacts, PoolMetrics};
use crate::registry::Registry;

impl PoolFacts {
    /// A snapshot of `registry`'s metrics with these facts.
    pub(crate) fn snapshot(&self, registry: &Registry) -> PoolMetrics {
        let mut m = metrics(registry);
        m.topology_discovered = self.topology_discovered;
        m.pin_fallback_workers = self.pin_fallback_workers;
        m.pin_fallback_reason.clone_from(&self.pin_fallback_reason);
        m.local_share.clone_from(&self.local_share);
        m
    }
}

/// A snapshot of the pool's metrics, less the build's [`PoolFacts`].
pub(crate) fn metrics(registry: &Registry) -> PoolMetrics {
    let workers = registry
        .shared
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let memory = s.blocks.memory_bytes();
            let queued = s.stealer.len() + s.inbox.len() + s.away.len();
            s.counters.snapshot(
                i,
                registry.worker_cpu[i].0,
                registry.worker_node[i],
                memory,
                queued as u64,
            )
        })
        .collect();
    let mut m = PoolMetrics::from_workers(
        registry.policy.name(),
        registry.topo.mal_count(),
        registry.topo.zone_depth(),
        registry.injected.load(Ordering::Relaxed),
        workers,
    );
    m.turnaround = registry.turnaround.snapshot();
    m.policy_switches = registry.policy.switches();
    m.last_policy_switch_us = registry.policy.switched_at_us();
    m
}

/// Takes metric snapshots of a pool from any thread; see
/// [`ThreadPool::metrics_handle`](crate::ThreadPool::metrics_handle).
#[derive(Clone, Debug)]
pub struct MetricsHandle {
    registry: Arc<Registry>,
    facts: Arc<PoolFacts>,
}

impl MetricsHandle {
    pub(crate) fn new(registry: Arc<Registry>, facts: Arc<PoolFacts>) -> Self {
        Self { registry, facts }
    }

    /// Runs one periodic balancing pass now, on this thread, as
    /// [`ThreadPool::balance_now`](crate::ThreadPool::balance_now): what the control plane's
    /// balancer does at each tick, from any thread that holds the handle.
    pub fn balance_now(&self) -> PassReport {
        balance::pass(&self.registry, self.registry.now_us())
    }

    /// A snapshot, as [`ThreadPool::metrics`](crate::ThreadPool::metrics).
    #[must_use]
    pub fn snapshot(&self) -> PoolMetrics {
        self.facts.snapshot(&self.registry)
    }
}
