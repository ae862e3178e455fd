//! [`SnapshotView`]: an owned, in-memory [`MachineView`] for tests, benches and callers that
//! assemble the machine's state themselves.

use std::sync::Arc;

use zonal_topology::{CpuId, Topology};

use crate::view::{CpuLoad, MachineView, TaskMeta};

/// A [`MachineView`] that owns its loads and task lists.
///
/// [`push_task`](Self::push_task) keeps a CPU's [`CpuLoad`] consistent with its task list
/// (`nr_running`, `weighted_load`, `load_avg`, `util_avg`, `idle`);
/// [`set_load`](Self::set_load) overrides it.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{SnapshotView, MachineView, TaskMeta, TaskId};
/// use zonal::topology::{presets, CpuId, NodeId};
/// let mut v = SnapshotView::new(presets::preset("s1")?);
/// v.push_task(TaskMeta::new(TaskId(1), NodeId(0), CpuId(0)));
/// assert_eq!(v.cpu_load(CpuId(0)).nr_running, 1);
/// assert!(v.cpu_load(CpuId(1)).idle);
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SnapshotView {
    topo: Arc<Topology>,
    loads: Vec<CpuLoad>,
    tasks: Vec<Vec<TaskMeta>>,
    now_us: u64,
}

impl SnapshotView {
    /// An idle machine at time 0.
    #[must_use]
    pub fn new(topo: impl Into<Arc<Topology>>) -> Self {
        let topo = topo.into();
        let n = topo.cpu_count();
        Self {
            topo,
            loads: vec![
                CpuLoad {
                    idle: true,
                    ..CpuLoad::default()
                };
                n
            ],
            tasks: vec![Vec::new(); n],
            now_us: 0,
        }
    }

    /// The shared topology.
    #[must_use]
    pub fn topology_arc(&self) -> &Arc<Topology> {
        &self.topo
    }

    /// Sets the clock.
    pub fn set_now(&mut self, now_us: u64) {
        self.now_us = now_us;
    }

    /// Appends `task` to the tail of `task.cpu`'s list and adds it to that CPU's load.
    ///
    /// # Panics
    /// If `task.cpu` is not a CPU of the topology.
    pub fn push_task(&mut self, task: TaskMeta) {
        let c = task.cpu.index();
        let l = &mut self.loads[c];
        l.nr_running += 1;
        l.weighted_load += u64::from(task.weight);
        l.load_avg += f64::from(task.weight);
        l.util_avg = (l.util_avg + 1024.0).min(1024.0);
        l.idle = false;
        self.tasks[c].push(task);
    }

    /// Overrides a CPU's load (the task list is left alone).
    pub fn set_load(&mut self, cpu: CpuId, load: CpuLoad) {
        self.loads[cpu.index()] = load;
    }

    /// The tasks of a CPU, mutably (loads are not recomputed).
    pub fn tasks_mut(&mut self, cpu: CpuId) -> &mut Vec<TaskMeta> {
        &mut self.tasks[cpu.index()]
    }
}

impl MachineView for SnapshotView {
    fn topology(&self) -> &Topology {
        &self.topo
    }

    #[inline]
    fn cpu_load(&self, cpu: CpuId) -> CpuLoad {
        self.loads[cpu.index()]
    }

    fn tasks(&self, cpu: CpuId) -> &[TaskMeta] {
        &self.tasks[cpu.index()]
    }

    fn now_us(&self) -> u64 {
        self.now_us
    }
}
