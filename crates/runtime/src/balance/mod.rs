//! Periodic balancing of queued tasks by the policy's balance side: the runtime's driver of
//! [`BalanceSide::balance`](zonal_policy::BalanceSide::balance), as the simulator's engine
//! is the other one. Every balancing rule stays in the policy crate; this module only
//! describes the pool to the policy and carries out what it asks.
//!
//! # One pass (`driver.rs`), off the workers
//!
//! 1. **Policy.** The pass reads the pool's current policy epoch (`policy_switch.rs`). A
//!    steal-only policy (no balance side, such as `none`) makes the pass do nothing
//!    ([`PassReport::balances`] is `false`). When the policy changed since the last pass,
//!    every worker's CPU gets the new policy's [`CpuBalanceState`](zonal_policy::CpuBalanceState)
//!    (`BalanceSide::new_state`).
//! 2. **Snapshot** (`snapshot.rs`, `load.rs`). For each worker: its queue lengths (deque,
//!    inbox, away queue — lock-free reads), whether it idles, and its PELT-like decayed
//!    load and utilisation, as a [`MachineView`](zonal_policy::MachineView) whose task lists
//!    hold one representative task per queued task of the away queue (the queue a pass may
//!    take from).
//! 3. **Balance.** For each worker's CPU in turn, `BalanceSide::balance` over the view with
//!    that CPU's state: the policy decides which levels are due (`next_due_us`, the busy
//!    factor), finds the busiest group and CPU, and returns migrations — exactly as the
//!    simulator's tick does.
//! 4. **Apply.** Each migration "from A's CPU to B's" pops a real task of A's away queue,
//!    checks it again with the policy's `StealSide::eligibility` and its real metadata
//!    ([`MoveKind::Periodic`](zonal_policy::MoveKind::Periodic)), and moves it to B's away
//!    queue with one more migration (B's inbox if that ages it); a refused task goes back
//!    to A (its inbox if aged). A moved async task also records B as its worker
//!    (`async_task::async_moved`), so that its next poll does not count the move again
//!    (`async_task/mod.rs`): each move is one migration, whoever makes it. B (or A) is woken if it sleeps. The view is updated before
//!    the next CPU balances. Each move is recorded with its level (relative to the task's
//!    previous node) in the [`PassReport`] and in the balancer's totals.
//!
//! # What a pass never does
//!
//! - It never blocks a worker: it reads atomics and queue lengths, pops and pushes on
//!   lock-free queues, and takes only its own lock (and, for a wake-up, a sleeping worker's
//!   parking lock). Workers pay nothing per task: the only new worker-side writes are the
//!   idle-span start and end (`load.rs`).
//! - It never moves a running task (running tasks are in no queue), a pinned or aged one
//!   (they live in inboxes, which it never pops), nor a fresh task of a deque (bare jobs,
//!   which idle workers steal instead).
//! - It never loses or duplicates a task: each pop hands the task to the pass alone, and
//!   every popped task is pushed to exactly one queue before the migration returns.

mod driver;
mod live;
mod load;
mod snapshot;
mod synthetic;

use zonal_policy::RefusalCounts;
use zonal_topology::{Level, NodeId};

pub(crate) use live::{pass, Balancer};
pub use synthetic::SyntheticPool;

/// One task a pass moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct MoveRecord {
    /// The worker whose away queue it left.
    pub from_worker: usize,
    /// The worker it was queued on.
    pub to_worker: usize,
    /// `from_worker`'s node.
    pub from_node: NodeId,
    /// `to_worker`'s node.
    pub to_node: NodeId,
    /// The task's origin node.
    pub origin: NodeId,
    /// Its migration count before this move.
    pub migrations_before: u32,
    /// The level of the move, relative to the task's previous node.
    pub level: Level,
    /// Whether the move aged it (it went to the destination's inbox).
    pub aged: bool,
}

/// What one balancing pass did ([`ThreadPool::balance_now`](crate::ThreadPool::balance_now)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PassReport {
    /// The pass's time, µs of the pool's clock.
    pub now_us: u64,
    /// The policy it asked.
    pub policy: String,
    /// Whether that policy balances at all (`false` for steal-only policies: nothing done).
    pub balances: bool,
    /// CPUs whose pass attempted something (a level was due) or asked for a migration.
    pub cpus_balanced: u32,
    /// Balancing attempts (one per CPU and level attempted).
    pub attempts: u32,
    /// Migrations the policy asked for.
    pub asked: u32,
    /// The tasks moved, in order.
    pub moves: Vec<MoveRecord>,
    /// Candidates the policy refused while deciding (over representative tasks).
    pub refused_by_policy: RefusalCounts,
    /// Real tasks refused when a migration was applied (checked with their metadata).
    pub refused_on_apply: RefusalCounts,
    /// Migrations that found no task to move (the source's queue had emptied).
    pub not_found: u32,
    /// Moves of this pass, by level.
    pub migrations_by_level: Vec<u64>,
    /// Moves of every pass so far, by level (the balancer's own counter).
    pub total_migrations_by_level: Vec<u64>,
}
