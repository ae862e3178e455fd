//! Seeded fork-join task graphs for the work-stealing mode.
//!
//! A graph is a forest of divide-and-conquer trees: every root spawns `fanout` children,
//! each of which spawns `fanout` more, down to `depth`; leaves do random work. Every task
//! runs in `segments` slices: after each slice but the last it re-queues itself as a
//! *continuation* (keeping its origin and migration count, as the runtime's
//! `TaskOptions::continuation()` does), so that long-lived tasks can be stolen again and age.
//! Roots are spawned on the workers of the first `root_nodes` nodes, their origin that node:
//! a small `root_nodes` skews the work onto a few nodes (data-bearing tasks that the rest of
//! the machine must steal).

use zonal_policy::Rng;

use super::StealModeError;

/// The largest graph, in tasks (checked before anything is allocated).
pub const MAX_TASKS: usize = 4_000_000;
/// The most slices per task.
pub const MAX_SEGMENTS: u32 = 64;
/// The longest work of one slice, µs.
pub const MAX_SLICE_US: u64 = 10_000_000;

/// What graph to draw.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GraphSpec {
    /// Trees in the forest (≥ 1).
    pub roots: usize,
    /// Levels below a root (0: roots are leaves).
    pub depth: u32,
    /// Children of every inner task (≥ 1).
    pub fanout: u32,
    /// Work of an inner task's slice, µs.
    pub inner_us: u64,
    /// A leaf's slice work is drawn uniformly from this range, µs (`lo ≤ hi`).
    pub leaf_us: (u64, u64),
    /// Slices per task (1..=[`MAX_SEGMENTS`]).
    pub segments: u32,
    /// Roots are spread over the workers of the first `root_nodes` CPU nodes (≥ 1; more
    /// than the machine has means all of them).
    pub root_nodes: usize,
}

impl GraphSpec {
    /// A skewed divide-and-conquer forest: 64 trees of depth 4 and fanout 3 (7,744 tasks),
    /// leaves of 20–200 µs, three slices each, born on two nodes.
    #[must_use]
    pub fn skewed() -> Self {
        Self {
            roots: 64,
            depth: 4,
            fanout: 3,
            inner_us: 5,
            leaf_us: (20, 200),
            segments: 3,
            root_nodes: 2,
        }
    }

    /// The number of tasks the spec describes.
    ///
    /// # Errors
    /// [`StealModeError::BadSpec`] naming the field when a value is out of range or the
    /// graph would exceed [`MAX_TASKS`].
    pub fn task_count(&self) -> Result<usize, StealModeError> {
        let bad = |field: &'static str, value: String, expected: &str| StealModeError::BadSpec {
            field,
            value,
            expected: expected.into(),
        };
        if self.roots == 0 {
            return Err(bad("roots", "0".into(), "at least 1"));
        }
        if self.fanout == 0 {
            return Err(bad("fanout", "0".into(), "at least 1"));
        }
        if self.root_nodes == 0 {
            return Err(bad("root_nodes", "0".into(), "at least 1"));
        }
        if self.segments == 0 || self.segments > MAX_SEGMENTS {
            return Err(bad(
                "segments",
                self.segments.to_string(),
                &format!("1..={MAX_SEGMENTS}"),
            ));
        }
        if self.leaf_us.0 > self.leaf_us.1 {
            return Err(bad("leaf_us", format!("{:?}", self.leaf_us), "lo ≤ hi"));
        }
        if self.leaf_us.1 > MAX_SLICE_US || self.inner_us > MAX_SLICE_US {
            return Err(bad(
                "leaf_us/inner_us",
                format!("{:?}/{}", self.leaf_us, self.inner_us),
                &format!("at most {MAX_SLICE_US} µs"),
            ));
        }
        let too_big = || {
            bad(
                "roots/depth/fanout",
                format!("{}/{}/{}", self.roots, self.depth, self.fanout),
                &format!("at most {MAX_TASKS} tasks in all"),
            )
        };
        let mut per_tree: usize = 0;
        let mut level: usize = 1;
        for _ in 0..=self.depth {
            per_tree = per_tree.checked_add(level).ok_or_else(too_big)?;
            if per_tree > MAX_TASKS {
                return Err(too_big());
            }
            level = level
                .checked_mul(self.fanout as usize)
                .ok_or_else(too_big)?;
        }
        let total = per_tree.checked_mul(self.roots).ok_or_else(too_big)?;
        if total > MAX_TASKS {
            return Err(too_big());
        }
        Ok(total)
    }
}

/// One task of a graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphTask {
    /// Work of one slice, µs.
    pub slice_us: u64,
    /// Its children (task indexes), spawned when its last slice ends.
    pub children: std::ops::Range<u32>,
}

/// A drawn graph: tasks in breadth-first order per tree, roots first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGraph {
    /// Every task.
    pub tasks: Vec<GraphTask>,
    /// The roots (task indexes).
    pub roots: Vec<u32>,
    /// Slices per task.
    pub segments: u32,
    /// Over how many nodes the roots are spread.
    pub root_nodes: usize,
}

impl TaskGraph {
    /// Draws the graph of `spec` from `seed`: the same seed, the same graph.
    ///
    /// ```
    /// use zonal_sim::{GraphSpec, TaskGraph};
    /// let g = TaskGraph::generate(&GraphSpec::skewed(), 1)?;
    /// assert_eq!(g.tasks.len(), 64 * (1 + 3 + 9 + 27 + 81));
    /// assert_eq!(g, TaskGraph::generate(&GraphSpec::skewed(), 1)?);
    /// # Ok::<(), zonal_sim::StealModeError>(())
    /// ```
    ///
    /// # Errors
    /// [`StealModeError::BadSpec`] for a spec out of range (checked before allocating).
    pub fn generate(spec: &GraphSpec, seed: u64) -> Result<Self, StealModeError> {
        let n = spec.task_count()?;
        let mut rng = Rng::new(seed ^ 0x0047_5241_5048);
        let mut tasks: Vec<GraphTask> = Vec::with_capacity(n);
        let mut roots = Vec::with_capacity(spec.roots);
        for _ in 0..spec.roots {
            let root = tasks.len();
            roots.push(root as u32);
            tasks.push(GraphTask {
                slice_us: 0,
                children: 0..0,
            });
            // Breadth-first: tasks of depth d occupy [start, end).
            let (mut start, mut end) = (root, root + 1);
            for d in 0..=spec.depth {
                for t in start..end {
                    if d == spec.depth {
                        let span = spec.leaf_us.1 - spec.leaf_us.0;
                        let draw = if span == 0 {
                            0
                        } else {
                            rng.next_u64() % (span + 1)
                        };
                        tasks[t].slice_us = spec.leaf_us.0 + draw;
                    } else {
                        let first = tasks.len() as u32;
                        for _ in 0..spec.fanout {
                            tasks.push(GraphTask {
                                slice_us: 0,
                                children: 0..0,
                            });
                        }
                        tasks[t].slice_us = spec.inner_us;
                        tasks[t].children = first..tasks.len() as u32;
                    }
                }
                (start, end) = (end, tasks.len());
            }
        }
        debug_assert_eq!(tasks.len(), n);
        Ok(Self {
            tasks,
            roots,
            segments: spec.segments,
            root_nodes: spec.root_nodes,
        })
    }

    /// Total work of the graph at local speed, µs.
    #[must_use]
    pub fn work_us(&self) -> u64 {
        self.tasks.iter().map(|t| t.slice_us).sum::<u64>() * u64::from(self.segments)
    }
}
