//! The simulated machine's scheduler state, and the [`MachineView`] policies read it through.
//!
//! # Run queues
//!
//! Each CPU keeps one `Vec<TaskMeta>`: when the CPU is running, entry 0 is the running task
//! (flagged `running`), followed by the queued tasks in the order they were queued, so the
//! tail is the most recently queued task — exactly the slice [`MachineView::tasks`] hands
//! a policy, with no copying.
//!
//! The fair scheduler is round-robin with a fixed slice: all simulated tasks have the same
//! weight, for which CFS's pick-smallest-vruntime order is the queue order (a newly queued
//! task's vruntime is placed at the queue's minimum, i.e. behind the others).
//!
//! # Loads
//!
//! `nr_running` and `weighted_load` are exact. `load_avg` and `util_avg` imitate PELT: an
//! exponential average of the weighted load (and of `1024 × running`) with PELT's decay
//! `y^32 = 1/2` per 1024 µs period, evaluated at the view's `now_us` in whole periods from
//! a table, as Linux does (`runnable_avg_yN_inv`): policies read many CPUs' loads per pass
//! (the Linux family only those of the domains it balances, but fork placement, NUMALB and
//! average-weight more), so this must cost a lookup, not an `exp2`.

use zonal_policy::{CpuLoad, MachineView, PeltAverage, TaskMeta};
use zonal_topology::{CpuId, Topology};

/// The run segment a CPU is executing.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Segment {
    /// When the CPU picked the task.
    pub(crate) start_us: u64,
    /// When the task's work starts (after charged overheads).
    pub(crate) work_start_us: u64,
    /// Planned end.
    pub(crate) end_us: u64,
    /// Wall µs per µs of work.
    pub(crate) slowdown: f64,
    /// Whether the segment completes the task's burst.
    pub(crate) completes: bool,
}

/// One simulated CPU.
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuState {
    /// Running task first (if `running`), then the queue; tail = most recently queued.
    pub(crate) rq: Vec<TaskMeta>,
    pub(crate) running: bool,
    pub(crate) weighted: u64,
    /// Bumped whenever the current segment is cut short, to drop its stale end event.
    pub(crate) gen: u32,
    pub(crate) seg: Segment,
    /// Balancing cost not yet charged, ns.
    pub(crate) overhead_ns: u64,
}

/// What [`MachineView::cpu_load`] reads, kept apart from the run queues in one dense array:
/// policies scan many CPUs' loads per pass.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoadSlot {
    nr: u32,
    idle: bool,
    weighted: u64,
    load: PeltAverage,
    util: PeltAverage,
}

/// The machine: topology, CPUs, clock.
#[derive(Debug)]
pub(crate) struct MachineState<'t> {
    pub(crate) topo: &'t Topology,
    pub(crate) cpus: Vec<CpuState>,
    loads: Vec<LoadSlot>,
    pub(crate) now_us: u64,
}

impl<'t> MachineState<'t> {
    pub(crate) fn new(topo: &'t Topology) -> Self {
        Self {
            topo,
            cpus: vec![CpuState::default(); topo.cpu_count()],
            loads: vec![
                LoadSlot {
                    idle: true,
                    ..LoadSlot::default()
                };
                topo.cpu_count()
            ],
            now_us: 0,
        }
    }

    /// Refreshes the load `cpu` shows policies after its queue or running state changed.
    #[inline]
    pub(crate) fn touch(&mut self, cpu: usize) {
        let now = self.now_us;
        let c = &self.cpus[cpu];
        let l = &mut self.loads[cpu];
        l.nr = c.rq.len() as u32;
        l.idle = !c.running && c.rq.is_empty();
        l.weighted = c.weighted;
        l.load.set(now, c.weighted as f64);
        l.util.set(now, if c.running { 1024.0 } else { 0.0 });
    }

    #[inline]
    pub(crate) fn is_idle(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        !c.running && c.rq.is_empty()
    }
}

impl MachineView for MachineState<'_> {
    fn topology(&self) -> &Topology {
        self.topo
    }

    fn cpu_load(&self, cpu: CpuId) -> CpuLoad {
        let l = &self.loads[cpu.index()];
        CpuLoad {
            nr_running: l.nr,
            weighted_load: l.weighted,
            load_avg: l.load.at(self.now_us),
            util_avg: l.util.at(self.now_us),
            idle: l.idle,
        }
    }

    fn tasks(&self, cpu: CpuId) -> &[TaskMeta] {
        &self.cpus[cpu.index()].rq
    }

    fn now_us(&self) -> u64 {
        self.now_us
    }
}
