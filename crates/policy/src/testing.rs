//! Test support: small hand-built machines and views.

use std::sync::Arc;

use zonal_topology::{presets, CpuId, CpuSpec, Machine, NodeId, NodeSpec, Topology};

use crate::{SnapshotView, TaskId, TaskMeta};

/// `n` nodes of `cpus` CPUs with the given distance matrix.
pub(crate) fn machine(cpus: usize, rows: Vec<Vec<u64>>) -> Arc<Topology> {
    let nodes = (0..rows.len())
        .map(|i| NodeSpec {
            os_id: i as u32,
            cpus: (0..cpus)
                .map(|k| CpuSpec::alone((i * cpus + k) as u32, i as u32))
                .collect(),
            memory_bytes: None,
        })
        .collect();
    Arc::new(Topology::new(
        Machine::synthetic("test", nodes, rows).expect("valid test machine"),
    ))
}

/// Two nodes of two CPUs, 10/20.
pub(crate) fn two_nodes() -> Arc<Topology> {
    machine(2, vec![vec![10, 20], vec![20, 10]])
}

/// The paper's 16 × 2, six-level machine.
pub(crate) fn s1() -> Arc<Topology> {
    Arc::new(presets::preset("s1").expect("preset"))
}

/// A view builder over a topology.
pub(crate) struct TestView {
    pub(crate) view: SnapshotView,
    next_id: u64,
}

impl TestView {
    pub(crate) fn new(topo: &Arc<Topology>) -> Self {
        let mut view = SnapshotView::new(Arc::clone(topo));
        view.set_now(10_000_000);
        Self { view, next_id: 1 }
    }

    /// Adds `n` nice-0 tasks born on `cpu`'s node to `cpu`; the first added to an empty CPU
    /// is flagged running. Returns the ids.
    pub(crate) fn load(&mut self, cpu: u32, n: usize) -> Vec<TaskId> {
        let topo = Arc::clone(self.view.topology_arc());
        let origin = topo.node_of(CpuId(cpu));
        (0..n).map(|_| self.add(cpu, origin, |_| {})).collect()
    }

    /// Adds one task on `cpu` with `origin`, tweaked by `f`; the first task of an empty CPU
    /// runs.
    pub(crate) fn add(
        &mut self,
        cpu: u32,
        origin: NodeId,
        f: impl FnOnce(&mut TaskMeta),
    ) -> TaskId {
        let id = TaskId(self.next_id);
        self.next_id += 1;
        let mut t = TaskMeta::new(id, origin, CpuId(cpu));
        t.running = self.view.tasks_mut(CpuId(cpu)).is_empty();
        f(&mut t);
        self.view.push_task(t);
        id
    }
}
