//! What a steal reports to the pool's steal observer: a leaf the registry (which holds the
//! observer) and the steal path both name.

/// What one steal did, for [`ThreadPoolBuilder::steal_observer`](crate::ThreadPoolBuilder::steal_observer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StealRecord {
    /// The stealing worker.
    pub thief: usize,
    /// The worker stolen from (`usize::MAX` for a node injector).
    pub victim: usize,
    /// The thief's CPU (OS index of the pool's topology).
    pub thief_cpu: u32,
    /// The victim's CPU (for a node injector: the CPU of the walk's slot it was visited from).
    pub victim_cpu: u32,
    /// The thief's node (dense index).
    pub thief_node: u32,
    /// The node the task was queued on.
    pub victim_node: u32,
    /// The task's origin node.
    pub origin: u32,
    /// The level of the victim seen from the thief (0 = level I).
    pub level: u8,
    /// The task's migration count *before* this steal.
    pub migrations_before: u32,
    /// Which queue it came from.
    pub queue: QueueKind,
    /// `(thief load, victim load)` when the policy's victim decision read loads (beyond a
    /// soft zone); `None` when its answer was known in advance.
    pub loads: Option<(u64, u64)>,
}

/// The queue a stolen task came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum QueueKind {
    /// A worker's deque of fresh tasks at home.
    Deque,
    /// A worker's queue of tasks away from home or already migrated.
    Away,
    /// A node's injector.
    NodeInjector,
}
