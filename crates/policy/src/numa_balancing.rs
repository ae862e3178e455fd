//! Linux's automatic NUMA balancing (`kernel.numa_balancing`) as a rule over one task's
//! scan history: when a task's address space is scanned, and whether the hinting faults that
//! follow move its pages to the node it runs on.
//!
//! Drivers (the simulator) keep one [`NumaTaskState`] per process, ask
//! [`NumaBalancing::scan_due`] as the task accumulates CPU time, and call
//! [`NumaBalancing::scan`] when it is due; the answer says whether the pages move. The rule
//! is pure: the same state and inputs give the same answer.
//!
//! # What Linux does (kernel/sched/fair.c), and what we keep
//!
//! - **When a task scans** (`task_tick_numa`, `task_numa_work`): a task's first scan waits
//!   until it has *run* `scan_delay_ms` of CPU time (`numa_scan_period` starts at
//!   `sysctl_numa_balancing_scan_delay`; the comment there: "using runtime rather than
//!   walltime … the task needs to have done some actual work before we bother with NUMA
//!   placement") and until `mm->numa_next_scan`, set `scan_delay_ms` after the address space
//!   was created, has passed. Each later scan waits for another `numa_scan_period` of CPU
//!   time and wall time. At the first scan the period becomes `task_scan_start` =
//!   [`NumaBalancing::scan_period_min_ms`]: `max(1000 / (MAX_SCAN_WINDOW / scan_size),
//!   scan_period_min / windows)` where `windows` = RSS / `scan_size` rounded up.
//! - **A scan** marks `scan_size_mb` of the address space `PROT_NONE`; the next access to a
//!   marked page takes a NUMA hinting fault. Our processes' RSS (16 MiB) is below the default
//!   256 MiB, so one scan covers the whole address space (one pass, `numa_scan_seq + 1`), and
//!   a running task touches its working set right after the scan: all its hinting faults
//!   come from the node it runs on at the scan.
//! - **Whether a faulting page moves** (`should_numa_migrate_memory`, with the default
//!   `MPOL_F_MORON` policy the target is the faulting CPU's node): early in a task's life
//!   (no preferred node yet, or `numa_scan_seq <= 4`) private faults migrate at once;
//!   afterwards the *two-stage filter* moves a page only when its previous hinting fault
//!   (`last_cpupid`) came from the same node. Our processes are single-threaded, so every
//!   fault is private.
//! - **Preferred node and scan rate** (`task_numa_placement`, `update_task_scan_period`):
//!   at each new scan sequence the per-node fault counts decay by half and add the last
//!   window's faults; the node with the most becomes the preferred node. The period then
//!   adapts: no local faults (and no shared ones) → it doubles, up to the maximum; otherwise
//!   with `lr` = 10 × local / (local + remote), `lr ≥ 7` lengthens it by
//!   `max(lr − 7, 1)` tenths, `lr < 7` shortens it by `7 − lr` tenths, clamped to
//!   [`scan_period_min_ms`](NumaBalancing::scan_period_min_ms),
//!   [`scan_period_max_ms`](NumaBalancing::scan_period_max_ms)
//!   (`NUMA_PERIOD_SLOTS` 10, `NUMA_PERIOD_THRESHOLD` 7).
//!
//! Not modelled: moving the *task* toward its preferred node (`numa_migrate_preferred`,
//! `task_numa_migrate`): [`ScanOutcome::preferred`] reports the node, no driver acts on it;
//! numa groups and shared faults (single-threaded processes have none); the CPU cost of the
//! scan and of the hinting faults themselves; partial page moves (the whole RSS moves or
//! none).
//!
//! # Sources
//!
//! The sysctl defaults are `kernel/sched/fair.c`'s `sysctl_numa_balancing_scan_period_min =
//! 1000`, `_max = 60000`, `_scan_size = 256`, `_scan_delay = 1000` and the kernel's
//! scheduler debugfs documentation (`Documentation/scheduler/sched-debug.rst`:
//! `scan_period_min_ms, scan_delay_ms, scan_period_max_ms, scan_size_mb`; "If pages are
//! properly placed then the scan delay increases, otherwise the scan delay decreases").
//!
//! # Which policies
//!
//! [`PolicyConfig::numa_balancing`](crate::PolicyConfig::numa_balancing) is accepted for the
//! Linux baselines of the modern era (`linux`, `thread-aware`) only: the 2.6 kernel the paper
//! measured had no automatic NUMA balancing (it arrived in Linux 3.8), and the other policies
//! either move pages by their own rule (the conservative policies: an aged task's pages
//! follow it) or are not Linux baselines.

use zonal_topology::NodeId;

/// `sysctl_numa_balancing_scan_delay` (ms): CPU time (and wall time) before a task's first
/// scan.
pub const SCAN_DELAY_MS: u32 = 1_000;
/// `sysctl_numa_balancing_scan_period_min` (ms): the shortest time to scan a task's whole
/// address space.
pub const SCAN_PERIOD_MIN_MS: u32 = 1_000;
/// `sysctl_numa_balancing_scan_period_max` (ms): the longest.
pub const SCAN_PERIOD_MAX_MS: u32 = 60_000;
/// `sysctl_numa_balancing_scan_size` (MiB) marked per scan.
pub const SCAN_SIZE_MB: u32 = 256;
/// `MAX_SCAN_WINDOW` (MiB/s): "never scan more PTEs than MAX_SCAN_WINDOW MB/sec".
pub const MAX_SCAN_WINDOW_MB: u32 = 2_560;
/// `NUMA_PERIOD_SLOTS`: the scan period adapts in tenths.
pub const NUMA_PERIOD_SLOTS: u64 = 10;
/// `NUMA_PERIOD_THRESHOLD`: aim for 70% local faults.
pub const NUMA_PERIOD_THRESHOLD: u64 = 7;
/// Private faults migrate at once while `numa_scan_seq` is at most this
/// (`should_numa_migrate_memory`).
pub const EARLY_SCAN_SEQ: u32 = 4;
pub use crate::config::MAX_SYSCTL_MS;
/// Page size of the fault counts, bytes.
const PAGE_BYTES: u64 = 4096;

/// The NUMA-balancing parameters (the kernel's sysctls).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::NumaBalancing;
/// let nb = NumaBalancing::default();
/// assert_eq!(nb.scan_delay_ms, 1000);
/// // A 16 MiB process: one scan window, so the period starts at scan_period_min.
/// assert_eq!(nb.scan_period_min_ms(16 << 20), 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaBalancing {
    /// `numa_balancing_scan_delay_ms`.
    pub scan_delay_ms: u32,
    /// `numa_balancing_scan_period_min_ms`.
    pub scan_period_min_ms: u32,
    /// `numa_balancing_scan_period_max_ms`.
    pub scan_period_max_ms: u32,
    /// `numa_balancing_scan_size_mb`.
    pub scan_size_mb: u32,
}

impl Default for NumaBalancing {
    /// The kernel's defaults.
    fn default() -> Self {
        Self {
            scan_delay_ms: SCAN_DELAY_MS,
            scan_period_min_ms: SCAN_PERIOD_MIN_MS,
            scan_period_max_ms: SCAN_PERIOD_MAX_MS,
            scan_size_mb: SCAN_SIZE_MB,
        }
    }
}

/// One task's NUMA-balancing history (`task_struct`'s `numa_*` fields).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NumaTaskState {
    /// `numa_scan_period`, ms.
    pub period_ms: u32,
    /// `node_stamp`: CPU time, µs, up to which scans were accounted.
    pub stamp_us: u64,
    /// `mm->numa_next_scan`: wall time, µs, before which no scan runs.
    pub next_scan_us: u64,
    /// `numa_scan_seq`: completed passes over the address space.
    pub seq: u32,
    /// The node the task's last hinting faults came from (`last_cpupid`'s node).
    pub last_fault_node: Option<NodeId>,
    /// `numa_preferred_nid`.
    pub preferred: Option<NodeId>,
    /// Decayed hinting faults per node (`numa_faults[NUMA_MEM]`), pages.
    pub faults: Vec<u64>,
    /// Faults of the current window (`numa_faults[NUMA_MEMBUF]`): node and pages.
    pub window: Option<(NodeId, u64)>,
    /// `numa_faults_locality`: (remote, local) pages in the current window.
    pub locality: (u64, u64),
}

/// What one scan decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// The node the task's pages move to (`None`: they stay).
    pub move_pages_to: Option<NodeId>,
    /// The task's preferred node after the scan (reported; the simulator does not move the
    /// task toward it).
    pub preferred: Option<NodeId>,
    /// The scan period now, ms.
    pub period_ms: u32,
}

impl NumaBalancing {
    /// A new task's state (`init_numa_balancing`): created at `now_us`.
    #[must_use]
    pub fn new_task(&self, now_us: u64) -> NumaTaskState {
        NumaTaskState {
            period_ms: self.scan_delay_ms,
            next_scan_us: now_us + u64::from(self.scan_delay_ms) * 1000,
            ..NumaTaskState::default()
        }
    }

    /// `task_nr_scan_windows`: scan windows of `scan_size_mb` in an RSS, at least 1.
    #[must_use]
    pub fn scan_windows(&self, rss_bytes: u64) -> u64 {
        let size = u64::from(self.scan_size_mb.max(1)) << 20;
        rss_bytes.max(1).div_ceil(size)
    }

    /// `task_scan_min`, ms.
    #[must_use]
    pub fn scan_period_min_ms(&self, rss_bytes: u64) -> u32 {
        let windows = if self.scan_size_mb < MAX_SCAN_WINDOW_MB {
            MAX_SCAN_WINDOW_MB / self.scan_size_mb.max(1)
        } else {
            1
        };
        let floor = 1000 / windows.max(1);
        let scan = u64::from(self.scan_period_min_ms) / self.scan_windows(rss_bytes);
        floor.max(u32::try_from(scan).unwrap_or(u32::MAX))
    }

    /// `task_scan_max`, ms.
    #[must_use]
    pub fn scan_period_max_ms(&self, rss_bytes: u64) -> u32 {
        let smax = u64::from(self.scan_period_max_ms) / self.scan_windows(rss_bytes);
        self.scan_period_min_ms(rss_bytes)
            .max(u32::try_from(smax).unwrap_or(u32::MAX))
    }

    /// `task_tick_numa`: whether a task that has run `runtime_us` of CPU time is due a scan
    /// at wall time `now_us`.
    #[must_use]
    pub fn scan_due(&self, st: &NumaTaskState, runtime_us: u64, now_us: u64) -> bool {
        runtime_us > st.stamp_us + u64::from(st.period_ms) * 1000 && now_us >= st.next_scan_us
    }

    /// One scan at wall time `now_us` of a task running on `cpu_node` whose pages are on
    /// `mem_node`, with `rss_bytes` resident and `nodes` nodes: the placement of the last
    /// window, the new pass, and the hinting faults it causes (see the module docs).
    pub fn scan(
        &self,
        st: &mut NumaTaskState,
        now_us: u64,
        cpu_node: NodeId,
        mem_node: NodeId,
        rss_bytes: u64,
        nodes: usize,
    ) -> ScanOutcome {
        // task_tick_numa: the stamp advances by the period that was due.
        let due_period = st.period_ms;
        if st.stamp_us == 0 {
            st.period_ms = self.scan_period_min_ms(rss_bytes); // task_scan_start
        }
        st.stamp_us += u64::from(due_period) * 1000;
        // task_numa_placement for the window the previous scan opened.
        if st.seq > 0 {
            self.placement(st, rss_bytes, nodes);
        }
        // task_numa_work: the next scan, and this pass (the whole RSS).
        st.next_scan_us = now_us + u64::from(st.period_ms) * 1000;
        st.seq += 1;
        // The hinting faults: every page, from cpu_node.
        let early = st.preferred.is_none() || st.seq <= EARLY_SCAN_SEQ;
        let migrate =
            cpu_node != mem_node && (early || st.last_fault_node.is_none_or(|n| n == cpu_node));
        st.last_fault_node = Some(cpu_node);
        let pages = rss_bytes.div_ceil(PAGE_BYTES).max(1);
        let local = cpu_node == mem_node;
        if local {
            st.locality.1 += pages;
        } else {
            st.locality.0 += pages;
        }
        let now_on = if migrate { cpu_node } else { mem_node };
        st.window = Some((now_on, pages));
        ScanOutcome {
            move_pages_to: migrate.then_some(cpu_node),
            preferred: st.preferred,
            period_ms: st.period_ms,
        }
    }

    /// `task_numa_placement` + `update_task_scan_period` for private faults only.
    fn placement(&self, st: &mut NumaTaskState, rss_bytes: u64, nodes: usize) {
        if st.faults.len() < nodes {
            st.faults.resize(nodes, 0);
        }
        let window = st.window.take();
        for (n, f) in st.faults.iter_mut().enumerate() {
            let add = match window {
                Some((node, pages)) if node.index() == n => pages,
                _ => 0,
            };
            *f = *f / 2 + add;
        }
        let mut best: Option<(usize, u64)> = None;
        for (n, &f) in st.faults.iter().enumerate() {
            if f > 0 && best.is_none_or(|(_, b)| f > b) {
                best = Some((n, f));
            }
        }
        if let Some((n, _)) = best {
            st.preferred = Some(NodeId(n as u32));
        }
        let (remote, local) = std::mem::take(&mut st.locality);
        let (min, max) = (
            u64::from(self.scan_period_min_ms(rss_bytes)),
            u64::from(self.scan_period_max_ms(rss_bytes)),
        );
        let period = u64::from(st.period_ms);
        let next = if local == 0 {
            // "local + shared == 0": scan slower.
            (period * 2).min(max)
        } else {
            let slot = period.div_ceil(NUMA_PERIOD_SLOTS);
            let lr = local * NUMA_PERIOD_SLOTS / (local + remote);
            if lr >= NUMA_PERIOD_THRESHOLD {
                period + (lr - NUMA_PERIOD_THRESHOLD).max(1) * slot
            } else {
                period.saturating_sub((NUMA_PERIOD_THRESHOLD - lr) * slot)
            }
            .clamp(min, max.max(min))
        };
        st.period_ms = u32::try_from(next).unwrap_or(u32::MAX);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::config::{LinuxEra, PolicyConfig};

    const RSS: u64 = 16 << 20;

    #[test]
    fn the_first_scan_waits_for_the_delay_in_cpu_and_wall_time() {
        let nb = NumaBalancing::default();
        let st = nb.new_task(500_000);
        // 1 s of CPU time is needed, strictly more.
        assert!(!nb.scan_due(&st, 1_000_000, 10_000_000));
        assert!(nb.scan_due(&st, 1_000_001, 10_000_000));
        // And the wall clock must be past creation + delay.
        assert!(!nb.scan_due(&st, 2_000_000, 1_499_999));
        assert!(nb.scan_due(&st, 2_000_000, 1_500_000));
    }

    #[test]
    fn a_task_running_away_from_its_memory_moves_its_pages_at_the_first_scan() {
        let nb = NumaBalancing::default();
        let mut st = nb.new_task(0);
        let out = nb.scan(&mut st, 1_000_000, NodeId(3), NodeId(0), RSS, 4);
        assert_eq!(out.move_pages_to, Some(NodeId(3)));
        assert_eq!(st.seq, 1);
        assert_eq!(st.stamp_us, 1_000_000);
        assert_eq!(st.period_ms, 1000);
        assert_eq!(st.next_scan_us, 2_000_000);
    }

    #[test]
    fn a_task_at_home_moves_nothing_and_scans_slower() {
        let nb = NumaBalancing::default();
        let mut st = nb.new_task(0);
        assert_eq!(
            nb.scan(&mut st, 1_000_000, NodeId(1), NodeId(1), RSS, 2)
                .move_pages_to,
            None
        );
        let out = nb.scan(&mut st, 2_000_000, NodeId(1), NodeId(1), RSS, 2);
        assert_eq!(out.move_pages_to, None);
        // All faults local: lr = 10, three tenths longer.
        assert_eq!(out.period_ms, 1300);
        assert_eq!(out.preferred, Some(NodeId(1)));
    }

    #[test]
    fn after_the_early_scans_the_two_stage_filter_needs_two_faults_from_a_node() {
        let nb = NumaBalancing::default();
        let mut st = nb.new_task(0);
        for k in 1..=EARLY_SCAN_SEQ {
            nb.scan(
                &mut st,
                u64::from(k) * 1_000_000,
                NodeId(0),
                NodeId(0),
                RSS,
                2,
            );
        }
        assert!(st.preferred.is_some());
        // Past the early scans: the first fault from node 1 only records it…
        let t = 10_000_000;
        assert_eq!(
            nb.scan(&mut st, t, NodeId(1), NodeId(0), RSS, 2)
                .move_pages_to,
            None
        );
        // …the second consecutive one moves the pages.
        assert_eq!(
            nb.scan(&mut st, t + 1, NodeId(1), NodeId(0), RSS, 2)
                .move_pages_to,
            Some(NodeId(1))
        );
    }

    #[test]
    fn the_period_stays_within_its_bounds() {
        let nb = NumaBalancing::default();
        let mut st = nb.new_task(0);
        for k in 0..40 {
            let out = nb.scan(&mut st, k * 1_000_000, NodeId(0), NodeId(0), RSS, 1);
            assert!((1000..=60_000).contains(&out.period_ms), "{out:?}");
        }
        assert_eq!(st.period_ms, 60_000);
    }

    #[test]
    fn scan_windows_follow_the_rss() {
        let nb = NumaBalancing::default();
        assert_eq!(nb.scan_windows(RSS), 1);
        assert_eq!(nb.scan_windows(1 << 30), 4);
        // 1 GiB: 1000 / 4 = 250 ms, above the 100 ms floor.
        assert_eq!(nb.scan_period_min_ms(1 << 30), 250);
        assert_eq!(nb.scan_period_max_ms(1 << 30), 15_000);
    }

    #[test]
    fn configs_are_refused_where_numa_balancing_does_not_apply() {
        let mut cfg = PolicyConfig::named("linux").expect("linux");
        assert_eq!(NumaBalancing::from_config(&cfg).expect("off"), None);
        cfg.numa_balancing = true;
        assert_eq!(
            NumaBalancing::from_config(&cfg).expect("on"),
            Some(NumaBalancing::default())
        );
        cfg.linux_era = LinuxEra::V2_6;
        let e = NumaBalancing::from_config(&cfg).expect_err("2.6");
        assert!(e.to_string().contains("numa_balancing"), "{e}");
        assert!(e.to_string().contains("2.6"), "{e}");
        let mut cons = PolicyConfig::named("conservative-hard").expect("cons");
        cons.numa_balancing = true;
        let Err(e) = cons.build() else {
            panic!("conservative-hard with numa_balancing was accepted")
        };
        assert!(e.to_string().contains("conservative-hard"), "{e}");
        let mut delay = PolicyConfig::named("linux").expect("linux");
        delay.numa_scan_delay_ms = Some(50);
        assert!(delay.build().is_err(), "a sysctl without numa_balancing");
        delay.numa_balancing = true;
        assert_eq!(
            NumaBalancing::from_config(&delay)
                .expect("ok")
                .map(|n| n.scan_delay_ms),
            Some(50)
        );
        delay.numa_scan_delay_ms = Some(0);
        let Err(e) = delay.build() else {
            panic!("numa_scan_delay_ms = 0 was accepted")
        };
        assert!(e.to_string().contains("numa_scan_delay_ms"), "{e}");
    }
}
