//! Locality measured the same way for every runtime: each slice of work reads the CPU it
//! runs on (`sched_getcpu`) and the node of the pages it touches (`move_pages(2)` as a
//! query, on a few of its pages; pages NUMA balancing hides from it are read from
//! `/proc/self/pagemap`: `os::page_nodes`), and counts whether the two nodes are the same.
//! [`kernel_pages`] then asks the kernel where every page of a workload's data is.
//!
//! Nodes here are the kernel's (OS) node ids, for CPUs and pages alike.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use zonal::runtime::os;
use zonal::topology::Machine;

/// Pages sampled per slice (evenly spread over its bytes).
const SAMPLED_PAGES: usize = 4;

/// The node of each CPU (OS indexes), from the discovered machine.
#[derive(Clone, Debug, Default)]
pub struct CpuNodes {
    node_of: Vec<Option<u32>>,
}

impl CpuNodes {
    /// The map of `machine` (its CPUs, withheld and offline ones included).
    pub fn of(machine: &Machine) -> Self {
        let mut node_of = Vec::new();
        for node in machine.nodes() {
            let cpus = node
                .cpus
                .iter()
                .map(|&c| machine.cpu(c).os_index)
                .chain(node.withheld_cpus.iter().copied())
                .chain(node.offline_cpus.iter().copied());
            for cpu in cpus {
                let i = cpu as usize;
                if node_of.len() <= i {
                    node_of.resize(i + 1, None);
                }
                node_of[i] = Some(node.os_id);
            }
        }
        Self { node_of }
    }

    /// The node of OS CPU `cpu`, if known.
    pub fn node(&self, cpu: u32) -> Option<u32> {
        self.node_of.get(cpu as usize).copied().flatten()
    }

    /// The node of the CPU the calling thread runs on now.
    pub fn current(&self) -> Option<u32> {
        os::current_cpu().and_then(|c| self.node(c))
    }
}

/// The node most of the sampled pages of `data` are on (`os::page_nodes`), or `None` when
/// the kernel cannot say (untouched pages, pages hidden by NUMA balancing that no second
/// source names, no support).
pub fn data_node<T>(data: &[T]) -> Option<u32> {
    let bytes = std::mem::size_of_val(data);
    if bytes == 0 {
        return None;
    }
    let start = data.as_ptr().cast::<u8>();
    let mut votes: BTreeMap<u32, usize> = BTreeMap::new();
    for k in 0..SAMPLED_PAGES {
        let offset = bytes / SAMPLED_PAGES * k;
        // SAFETY: `offset < bytes`, so the address lies inside `data`'s allocation; it is
        // only passed to the kernel as a query, never dereferenced.
        let addr = unsafe { start.add(offset) };
        if let Ok(nodes) = os::page_nodes(addr, 1) {
            for n in nodes.into_iter().flatten() {
                *votes.entry(n).or_default() += 1;
            }
        }
    }
    votes.into_iter().max_by_key(|&(_, v)| v).map(|(n, _)| n)
}

/// Counts of task slices: how many ran on their data's node.
#[derive(Debug, Default)]
pub struct SliceLog {
    slices: AtomicU64,
    on_data_node: AtomicU64,
    unknown: AtomicU64,
}

impl SliceLog {
    /// Records one slice that runs now, on the calling thread, over `data`.
    pub fn record<T>(&self, cpus: &CpuNodes, data: &[T]) {
        self.slices.fetch_add(1, Ordering::Relaxed);
        match (cpus.current(), data_node(data)) {
            (Some(here), Some(there)) => {
                if here == there {
                    self.on_data_node.fetch_add(1, Ordering::Relaxed);
                }
            }
            _ => {
                self.unknown.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// What was recorded so far.
    pub fn summary(&self) -> SliceSummary {
        SliceSummary::of(
            self.slices.load(Ordering::Relaxed),
            self.on_data_node.load(Ordering::Relaxed),
            self.unknown.load(Ordering::Relaxed),
        )
    }
}

/// The slices of one workload on one runtime.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SliceSummary {
    /// Slices recorded.
    pub slices: u64,
    /// Those whose CPU was on the node of their data's pages.
    pub on_data_node: u64,
    /// Those where the CPU's node or the pages' node could not be read.
    pub unknown: u64,
    /// `on_data_node` over the slices whose nodes were read; `None` if none were.
    pub share_on_data_node: Option<f64>,
}

impl SliceSummary {
    /// The summary of `slices` slices, `on_data_node` of them on their data's node and
    /// `unknown` unread (at most `slices`).
    pub fn of(slices: u64, on_data_node: u64, unknown: u64) -> Self {
        let known = slices.saturating_sub(unknown);
        SliceSummary {
            slices,
            on_data_node,
            unknown,
            share_on_data_node: (known > 0).then(|| on_data_node as f64 / known as f64),
        }
    }

    /// This summary and `other`'s together.
    #[must_use]
    pub fn add(&self, other: &SliceSummary) -> SliceSummary {
        SliceSummary::of(
            self.slices + other.slices,
            self.on_data_node + other.on_data_node,
            self.unknown + other.unknown,
        )
    }
}

/// Where the kernel holds a workload's pages ([`os::page_nodes`]: `move_pages`, and for the
/// pages automatic NUMA balancing hides from it, `/proc/self/pagemap` or `numa_maps`).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelPages {
    /// Pages per node (OS id).
    pub by_node: BTreeMap<u32, u64>,
    /// Pages whose node could not be read.
    pub errors: u64,
    /// Those pages by reason (`os::PageUnknown`, kebab-case: `not-present`, `swapped`,
    /// `hidden` — present but hidden by NUMA balancing, and no second source could name
    /// its node —, `unconfirmed`, `kernel-<errno>`).
    pub errors_by_reason: BTreeMap<String, u64>,
    /// `/proc/sys/kernel/numa_balancing` when the pages were read (1: the kernel's scanner
    /// hides idle default-policy pages from `move_pages` and may move them; `unknown (…)`
    /// when unreadable, as in the report's confounders): recorded beside the reading.
    pub numa_balancing: String,
    /// Set when the query itself failed (no `move_pages` here, for example): why.
    pub unavailable: Option<String>,
}

/// A reason's name in [`KernelPages::errors_by_reason`].
fn reason_name(why: os::PageUnknown) -> String {
    match why {
        os::PageUnknown::NotPresent => "not-present".into(),
        os::PageUnknown::Swapped => "swapped".into(),
        os::PageUnknown::Hidden => "hidden".into(),
        os::PageUnknown::Unconfirmed => "unconfirmed".into(),
        os::PageUnknown::Kernel(errno) => format!("kernel-{errno}"),
        other => format!("{other:?}"),
    }
}

impl KernelPages {
    /// Adds the pages of `data`.
    pub fn add<T>(&mut self, data: &[T]) {
        let bytes = std::mem::size_of_val(data);
        if bytes == 0 {
            return;
        }
        if self.numa_balancing.is_empty() {
            self.numa_balancing = crate::numa::host::read("/proc/sys/kernel/numa_balancing");
        }
        match os::page_nodes(data.as_ptr().cast(), bytes) {
            Ok(pages) => {
                for p in pages {
                    match p {
                        Ok(n) => *self.by_node.entry(n).or_default() += 1,
                        Err(why) => {
                            self.errors += 1;
                            *self.errors_by_reason.entry(reason_name(why)).or_default() += 1;
                        }
                    }
                }
            }
            Err(e) => self.unavailable = Some(format!("move_pages: {e}")),
        }
    }

    /// Pages whose node the kernel named.
    pub fn placed(&self) -> u64 {
        self.by_node.values().sum()
    }
}

/// The pages of every slice in `parts`, as the kernel holds them.
pub fn kernel_pages<T, P: AsRef<[T]>>(parts: &[P]) -> KernelPages {
    let mut k = KernelPages::default();
    for p in parts {
        k.add(p.as_ref());
    }
    k
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_touched_buffer_has_a_node_and_an_untouched_one_none() {
        let v = vec![1u64; 1 << 16];
        let pages = kernel_pages::<u64, _>(&[&v[..]]);
        if cfg!(target_os = "linux") {
            assert!(pages.unavailable.is_none(), "{pages:?}");
            assert!(pages.placed() > 0, "{pages:?}");
            assert!(data_node(&v).is_some());
        }
        assert_eq!(data_node::<u64>(&[]), None);
    }

    #[test]
    fn slices_on_this_machine_are_counted() {
        let (_, machine) = crate::numa::host::Topo::discover().expect("discover");
        let cpus = CpuNodes::of(&machine);
        let log = SliceLog::default();
        let v = vec![1u64; 1 << 14];
        log.record(&cpus, &v);
        log.record(&cpus, &v[..0]);
        let s = log.summary();
        assert_eq!(s.slices, 2);
        assert_eq!(s.unknown, 1, "an empty slice has no node: {s:?}");
        if cfg!(target_os = "linux") && machine.nodes().len() == 1 {
            assert_eq!(s.on_data_node, 1, "one node: every slice is on it: {s:?}");
        }
    }
}
