//! The read-only view through which a policy sees the machine.
//!
//! The same policy code decides in the simulator (which owns exact per-task state) and in
//! the runtime (which samples its queues); property tests drive it with generated views.
//! The view never hands out clocks or randomness: the current time is a number the caller
//! supplies, and randomness is an explicit [`Rng`](crate::Rng).

use zonal_topology::{CpuId, NodeId, Topology};

/// Writes a plain numeric identifier type (ordered, hashable, serde as the number).
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($t:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub struct $name(pub $t);
    };
}

id_type!(
    /// A task's identity, unique within one view.
    TaskId(u64)
);

id_type!(
    /// A thread group (the process of a thread, for thread-aware selection).
    GroupId(u32)
);

/// Message counts of a task, for NUMALB's communication term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CommCounts {
    /// Messages exchanged with tasks on the task's own node.
    pub local_msgs: u32,
    /// Messages exchanged with tasks on other nodes.
    pub remote_msgs: u32,
}

/// What a policy knows of one task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaskMeta {
    /// Identity.
    pub id: TaskId,
    /// The node it was spawned on (or the node its data lives on).
    pub origin: NodeId,
    /// The CPU whose queue holds it (or that runs it).
    pub cpu: CpuId,
    /// How many times it has been migrated (stolen or moved) so far.
    pub migrations: u32,
    /// CFS load weight (see [`nice_to_weight`](crate::nice_to_weight)); 1024 is nice 0.
    pub weight: u32,
    /// Thread group, if the task belongs to one.
    pub group: Option<GroupId>,
    /// When it last ran, in µs of the caller's clock; `None` if it never ran.
    pub last_ran_us: Option<u64>,
    /// Whether it is running right now (a running task is never migrated by a pass).
    pub running: bool,
    /// Whether it may run on other CPUs at all (`false` for pinned tasks).
    pub migratable: bool,
    /// Communication counts, when known (NUMALB).
    pub comm: Option<CommCounts>,
}

impl TaskMeta {
    /// A nice-0, migratable, never-run task at its origin CPU.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// # use zonal::policy::{TaskMeta, TaskId};
    /// # use zonal::topology::{CpuId, NodeId};
    /// let t = TaskMeta::new(TaskId(1), NodeId(0), CpuId(0));
    /// assert_eq!(t.weight, 1024);
    /// ```
    #[must_use]
    pub fn new(id: TaskId, origin: NodeId, cpu: CpuId) -> Self {
        Self {
            id,
            origin,
            cpu,
            migrations: 0,
            weight: crate::NICE_0_WEIGHT,
            group: None,
            last_ran_us: None,
            running: false,
            migratable: true,
            comm: None,
        }
    }
}

/// What a policy knows of one CPU's load.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct CpuLoad {
    /// Runnable tasks, the running one included (Linux's `nr_running`).
    pub nr_running: u32,
    /// Sum of the CFS weights of those tasks.
    pub weighted_load: u64,
    /// PELT-style decayed load average (same scale as `weighted_load`).
    pub load_avg: f64,
    /// PELT-style decayed utilisation, 0..=1024.
    pub util_avg: f64,
    /// Whether the CPU is idle right now.
    pub idle: bool,
}

/// Sums of [`CpuLoad`] over a node's CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct NodeLoad {
    /// Runnable tasks on the node.
    pub nr_running: u32,
    /// Sum of weights.
    pub weighted_load: u64,
    /// Sum of decayed loads.
    pub load_avg: f64,
    /// Sum of utilisations.
    pub util_avg: f64,
    /// Idle CPUs.
    pub idle_cpus: u32,
    /// CPUs.
    pub cpus: u32,
}

/// The machine as a policy sees it: topology, loads and task metadata, all read-only.
///
/// Implementations must be consistent within one decision: `cpu_load(c).nr_running`
/// counts the tasks of `tasks(c)` (queued and running) when the implementation lists them.
pub trait MachineView {
    /// The machine's topology.
    fn topology(&self) -> &Topology;

    /// The load of one CPU.
    fn cpu_load(&self, cpu: CpuId) -> CpuLoad;

    /// The tasks on one CPU — the running one (flagged) and the queued ones, in the order a
    /// balancer should consider them (Linux detaches from the tail: most recently queued
    /// last). May be empty where the caller cannot enumerate tasks (the runtime's deques).
    fn tasks(&self, cpu: CpuId) -> &[TaskMeta];

    /// The caller's clock, µs, for cache-hotness and balance intervals.
    fn now_us(&self) -> u64;

    /// The load of a node: by default the sum over its CPUs.
    fn node_load(&self, node: NodeId) -> NodeLoad {
        let mut sum = NodeLoad::default();
        for &c in self.topology().cpus_of(node) {
            let l = self.cpu_load(c);
            sum.nr_running += l.nr_running;
            sum.weighted_load += l.weighted_load;
            sum.load_avg += l.load_avg;
            sum.util_avg += l.util_avg;
            sum.idle_cpus += u32::from(l.idle);
            sum.cpus += 1;
        }
        sum
    }
}
