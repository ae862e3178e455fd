//! The control plane's periodic balancer: the runtime's balance-side driver.
//!
//! # Protocol
//!
//! When balancing is on (`ControlOptions::balance_every(tick)`; off by default, and
//! `BALANCE_TICK` is the 4 ms tick of Linux at `CONFIG_HZ=250` and of the simulator), every
//! `tick` the control plane's runtime runs one balancing pass over the pool (`balance/`:
//! `balance::pass`, through the public `MetricsHandle::balance_now`): it refreshes the
//! per-worker decayed loads and queue lengths, asks the current policy's balance side for
//! every CPU whose level is due (the intervals come from `BalanceSide::new_state`, the very
//! code the simulator runs), and carries out
//! the migrations it returns by moving *queued* tasks between workers' away queues — never
//! a running one; a task is re-checked with its real metadata before it moves, and an aged
//! one never moves again. Each move is counted in the source worker's
//! `balance_migrations_by_level` (Prometheus `zonal_migrations_total{source="balance"}`).
//!
//! A pass runs on the control plane's own thread and takes only the balancer's lock, which
//! workers never take: it never blocks a worker. Missed ticks are skipped, not bunched
//! (`MissedTickBehavior::Skip`): a slow pass delays the next one instead of queuing several.
//! Passes stop when the control plane drops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::handle::MetricsHandle;

/// What the control plane's balancer has done so far ([`ControlPlane::balance_stats`](super::ControlPlane::balance_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct BalanceStats {
    /// Passes run.
    pub passes: u64,
    /// Tasks moved by those passes.
    pub moves: u64,
    /// Total time spent in passes, ns.
    pub pass_ns: u64,
    /// The longest pass, ns.
    pub max_pass_ns: u64,
}

/// The counters behind [`BalanceStats`], written by the balancer task only.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    passes: AtomicU64,
    moves: AtomicU64,
    pass_ns: AtomicU64,
    max_pass_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> BalanceStats {
        BalanceStats {
            passes: self.passes.load(Ordering::Relaxed),
            moves: self.moves.load(Ordering::Relaxed),
            pass_ns: self.pass_ns.load(Ordering::Relaxed),
            max_pass_ns: self.max_pass_ns.load(Ordering::Relaxed),
        }
    }
}

/// Runs a pass every `tick` until the runtime stops.
pub(crate) async fn run(handle: MetricsHandle, tick: Duration, counters: Arc<Counters>) {
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        let start = Instant::now();
        let report = handle.balance_now();
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        counters.passes.fetch_add(1, Ordering::Relaxed);
        counters
            .moves
            .fetch_add(report.moves.len() as u64, Ordering::Relaxed);
        counters.pass_ns.fetch_add(ns, Ordering::Relaxed);
        counters.max_pass_ns.fetch_max(ns, Ordering::Relaxed);
    }
}
