//! [`ThreadPoolBuilder::num_threads`](crate::ThreadPoolBuilder::num_threads): which CPUs a
//! pool of `n` workers runs on.
//!
//! - `n` at most the topology's CPUs: the first CPUs of each node, taken round-robin over
//!   the nodes that have CPUs (node 0's first CPU, node 1's first, …, then every node's
//!   second, …), so that the workers spread over as many nodes as they can — what the
//!   node-split loops and node-local memory want — rather than filling node 0 first.
//! - `n` above the CPUs: one worker per CPU, and the `n − cpus` extra workers dealt
//!   round-robin over the nodes with CPUs. Each extra worker runs on a *virtual CPU* added to
//!   the pool's topology on its node, sharing the core (and cache group) of one of the node's
//!   CPUs (taken in turn), with an OS index above every real one. The steal walks, zones and
//!   policies then treat it like any CPU of its node; it is never pinned
//!   ([`ThreadPool::unpinned_workers`](crate::ThreadPool::unpinned_workers),
//!   [`ThreadPool::extra_workers`](crate::ThreadPool::extra_workers)).
//!
//! At most [`MAX_THREADS`] workers: the topology crate's limit on CPUs
//! ([`zonal_topology::MAX_CPUS`]), which the virtual CPUs count against.

use zonal_topology::{CpuId, CpuSpec, Topology};

use crate::error::{BuildError, ErrorKind};

/// The most workers a pool may have: a larger
/// [`num_threads`](crate::ThreadPoolBuilder::num_threads) is refused with a [`BuildError`]
/// naming the value. It is the topology crate's limit on CPUs, [`zonal_topology::MAX_CPUS`]
/// (the extra workers' virtual CPUs count against it).
pub const MAX_THREADS: usize = zonal_topology::MAX_CPUS;

/// The most workers a pool may have, [`MAX_THREADS`] (rayon's `max_num_threads`).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// assert_eq!(zonal::max_num_threads(), zonal::runtime::MAX_THREADS);
/// ```
#[must_use]
pub fn max_num_threads() -> usize {
    MAX_THREADS
}

/// The workers' CPUs for `n` workers, and the topology they live in (with the extra
/// workers' virtual CPUs, if any).
pub(crate) struct Sized {
    pub(crate) topo: Topology,
    pub(crate) cpus: Vec<CpuId>,
    /// OS indexes from this one on are extra workers' virtual CPUs (`u32::MAX`: none).
    pub(crate) first_extra_os: u32,
}

impl Sized {
    /// Whether `cpu` is an extra worker's virtual CPU.
    pub(crate) fn is_extra(&self, cpu: CpuId) -> bool {
        self.topo.machine().cpu(cpu).os_index >= self.first_extra_os
    }
}

/// Checks `n` against [`MAX_THREADS`].
pub(crate) fn check(n: usize) -> Result<(), BuildError> {
    if n > MAX_THREADS {
        return Err(BuildError::new(ErrorKind::TooManyThreads {
            requested: n,
            limit: MAX_THREADS,
        }));
    }
    Ok(())
}

/// The CPUs (and topology) of a pool of `n ≥ 1` workers over `topo` (module doc).
pub(crate) fn size(topo: Topology, n: usize) -> Result<Sized, BuildError> {
    check(n)?;
    let cpus = topo.cpu_count();
    if n <= cpus {
        let chosen = spread(&topo, n);
        return Ok(Sized {
            topo,
            cpus: chosen,
            first_extra_os: u32::MAX,
        });
    }
    let (topo, first_extra_os) = with_extra_cpus(&topo, n - cpus)?;
    let chosen = (0..topo.cpu_count()).map(CpuId::new).collect();
    Ok(Sized {
        topo,
        cpus: chosen,
        first_extra_os,
    })
}

/// `n ≤ cpus` CPUs, round-robin over the nodes that have CPUs, ascending.
fn spread(topo: &Topology, n: usize) -> Vec<CpuId> {
    let nodes: Vec<&[CpuId]> = topo.cpu_nodes().map(|node| topo.cpus_of(node)).collect();
    let mut out = Vec::with_capacity(n);
    let mut round = 0;
    while out.len() < n {
        for cpus in &nodes {
            if out.len() == n {
                break;
            }
            if let Some(&c) = cpus.get(round) {
                out.push(c);
            }
        }
        round += 1;
    }
    out.sort_unstable();
    out
}

/// `topo` with `extra` virtual CPUs, dealt round-robin over its nodes with CPUs, each on
/// the core of one of its node's CPUs in turn; and the first OS index they use.
fn with_extra_cpus(topo: &Topology, extra: usize) -> Result<(Topology, u32), BuildError> {
    let m = topo.machine();
    let first = m
        .cpus()
        .iter()
        .map(|c| c.os_index)
        .max()
        .map_or(0, |max| max.saturating_add(1));
    let mut specs = m.node_specs();
    let hosts: Vec<usize> = (0..m.nodes().len())
        .filter(|&i| m.nodes()[i].has_cpus())
        .collect();
    for j in 0..extra {
        let node = hosts[j % hosts.len()];
        let real = &m.nodes()[node].cpus;
        let host = m.cpu(real[(j / hosts.len()) % real.len()]);
        // `extra` < MAX_THREADS, so this fits unless the real indexes are near u32::MAX.
        let os_index = u32::try_from(j)
            .ok()
            .and_then(|j| first.checked_add(j))
            .ok_or(BuildError::new(ErrorKind::TooManyThreads {
                requested: topo.cpu_count() + extra,
                limit: MAX_THREADS,
            }))?;
        specs[node].cpus.push(CpuSpec {
            os_index,
            core: host.core,
            cache_group: host.cache_group,
        });
    }
    // The same name, distances and distance kind, with the extra CPUs.
    let machine = m.respecify(specs)?;
    Ok((
        Topology::new(machine).with_zone_depth(topo.zone_depth()),
        first,
    ))
}

#[cfg(test)]
mod test {
    use zonal_topology::presets;

    use super::*;

    #[test]
    fn few_workers_spread_over_the_nodes() {
        let topo = presets::preset("s1").unwrap(); // 16 nodes of 2 CPUs
        let s = size(topo, 20).unwrap();
        assert_eq!(s.cpus.len(), 20);
        let mut per_node = [0; 16];
        for &c in &s.cpus {
            per_node[s.topo.node_of(c).index()] += 1;
        }
        assert_eq!(&per_node[..4], &[2, 2, 2, 2]);
        assert!(per_node.iter().all(|&k| k >= 1), "{per_node:?}");
        assert!(s.cpus.iter().all(|&c| !s.is_extra(c)));
    }

    #[test]
    fn extra_workers_get_virtual_cpus_on_every_node() {
        let topo = presets::preset("s1").unwrap();
        let zone = topo.zone_depth();
        let s = size(topo, 48).unwrap();
        assert_eq!((s.cpus.len(), s.topo.cpu_count()), (48, 48));
        assert_eq!(s.topo.zone_depth(), zone);
        let extra: Vec<_> = s.cpus.iter().filter(|&&c| s.is_extra(c)).collect();
        assert_eq!(extra.len(), 16);
        for node in s.topo.cpu_nodes() {
            assert_eq!(s.topo.cpus_of(node).len(), 3, "node {node:?}");
        }
    }

    #[test]
    fn absurd_counts_are_refused() {
        let topo = presets::preset("s1").unwrap();
        assert!(size(topo, MAX_THREADS + 1).is_err());
    }
}
