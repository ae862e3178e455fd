//! What every queue holds (core): a job pointer ([`Task`]) and the metadata its job's
//! header carries ([`Meta`]); and the public types that make and report that metadata, the
//! options of a spawned task ([`TaskOptions`]) and what a running task knows of itself
//! ([`TaskInfo`]), re-exported by the public `task` namespace (`task.rs`).

use zonal_policy::{GroupId, TaskId, TaskMeta};

use crate::job::{JobHeader, JobRef};
use zonal_topology::{CpuId, NodeId};

/// "No origin yet". No queued task carries it today: work from outside the pool without a
/// named origin takes the next node with workers, round-robin, when it is spawned
/// (`route.rs`); the queues keep the rule that such a task takes the node of the worker that
/// pops it (not a migration), for any path that may queue one.
pub(crate) const NO_ORIGIN: u32 = u32::MAX;
/// "No group" in [`Meta::group`].
pub(crate) const NO_GROUP: u32 = u32::MAX;

/// [`Meta::flags`]: the computation's origin was *placed*: named by the user
/// ([`TaskOptions::origin`], `spawn_on`, `spawn_pinned`, a node-partitioned iterator part)
/// or inherited from a task whose origin was. An unplaced computation's origin is the node
/// the pool routed it to (a call from outside the pool without a named origin). The only
/// difference: a parallel iterator cuts its index space by node at the top of an unplaced
/// computation only (`zonal_runtime::current_node_cut`): a placed one stays whole, so that
/// the computation stays in its origin's zone.
pub(crate) const PLACED: u16 = 1;

/// The metadata a queued task carries (16 bytes, copied with the task).
///
/// # Whole computations
///
/// A child (a `join` half, a scope spawn, `spawn`, `spawn_async`, an iterator's split) takes
/// its **parent's origin** — the data it works on lives where the computation's does — and
/// the parent's placed flag, group and weight ([`Meta::child_of`]). So every task of a
/// computation rooted on node N carries origin N, and every steal of any of them is checked
/// against N: the conservative rules bound the whole computation, not each task's first
/// move. Only an explicit origin starts a new root (`TaskOptions::origin`, `spawn_on`,
/// `spawn_pinned`, an iterator's node part).
///
/// A child's **migration count starts at 0**: ageing is about how often *one task* was
/// moved (its cache and pages follow it, or not); a child has not moved. Inheriting the
/// parent's count would age whole subtrees after `age_limit` steals of their root and stop
/// all parallelism below it, while the spread of the computation is already bounded by the
/// inherited origin. A continuation ([`TaskOptions::continuation`]) is the same task cut in
/// slices and keeps the count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Origin node (dense index), or [`NO_ORIGIN`].
    pub(crate) origin: u32,
    /// Moves between workers so far (saturating).
    pub(crate) migrations: u16,
    /// [`PLACED`] or 0.
    pub(crate) flags: u16,
    /// Thread group, or [`NO_GROUP`].
    pub(crate) group: u32,
    /// CFS weight (1024 = nice 0).
    pub(crate) weight: u32,
}

impl Meta {
    /// A fresh, unplaced task born on `origin`.
    #[inline]
    pub(crate) const fn fresh(origin: u32) -> Self {
        Self {
            origin,
            migrations: 0,
            flags: 0,
            group: NO_GROUP,
            weight: zonal_policy::NICE_0_WEIGHT,
        }
    }

    /// A child of `parent` (type docs, "Whole computations"): its origin, placed flag, group
    /// and weight; never migrated.
    #[inline]
    pub(crate) const fn child_of(parent: &Meta) -> Self {
        Self {
            migrations: 0,
            ..*parent
        }
    }

    /// Whether the task is exactly what a bare job on a deque of `node` implies: fresh at
    /// home, unplaced, default group and weight (the representative task of a thief's
    /// check).
    #[inline]
    pub(crate) fn is_fresh_at(&self, node: u32) -> bool {
        *self == Self::fresh(node)
    }

    /// Whether a thief's check of the representative task of a deque of `node` speaks for
    /// this task: [`is_fresh_at`](Self::is_fresh_at) but for the placed flag, which no policy
    /// reads.
    #[inline]
    pub(crate) fn is_representative_at(&self, node: u32) -> bool {
        Self { flags: 0, ..*self }.is_fresh_at(node)
    }

    /// Whether the origin was placed ([`PLACED`]).
    #[inline]
    pub(crate) const fn placed(&self) -> bool {
        self.flags & PLACED != 0
    }

    /// Moves so far, as the policies count them.
    #[inline]
    pub(crate) const fn moves(&self) -> u32 {
        self.migrations as u32
    }

    /// One more move (saturating).
    #[inline]
    pub(crate) const fn moved(mut self) -> Self {
        self.migrations = self.migrations.saturating_add(1);
        self
    }

    /// The policy's view of this task, queued on `cpu`.
    #[inline]
    pub(crate) fn to_policy(self, id: u64, cpu: CpuId) -> TaskMeta {
        let mut t = TaskMeta::new(TaskId(id), NodeId(self.origin), cpu);
        t.migrations = u32::from(self.migrations);
        t.weight = self.weight;
        t.group = (self.group != NO_GROUP).then_some(GroupId(self.group));
        t
    }
}

/// A queued job: the unit every queue holds. Its metadata lives in the job's header, or, for
/// a bare job, is implied by the deque it lies in (module docs).
///
/// Invariant: a `Task` designates a live job that is either a `BareJob` (its `JobRef` is
/// tagged) or whose first field is a `JobHeader` (`StackJob` and `HeapJob` are
/// `#[repr(C)]` with the header first); a bare job is only ever in its spawner's deque or
/// held to be run. At any time at most one thread holds a task outside a queue (queues hand
/// each task to exactly one popper); that thread alone reads or writes the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Task {
    pub(crate) job: JobRef,
}

impl Task {
    /// # Safety
    /// `job` must designate a live job whose first field is a `JobHeader`, or a bare job
    /// (tagged `JobRef`) about to be pushed on its spawner's deque.
    #[inline]
    pub(crate) unsafe fn new(job: JobRef) -> Self {
        Task { job }
    }

    /// The task's metadata. `home` is `Meta::fresh(node)` for the node of the worker whose
    /// deque the task was taken from (or of the queue it was taken from): the metadata of a
    /// bare job, which is always fresh at home on that deque (module docs). Ignored for jobs
    /// with a header.
    ///
    /// `home` should live in memory written long ago (`WorkerThread::home`,
    /// `Registry::fresh_meta`): the metadata is then one 16-byte load from either place.
    /// Building it field by field here made the compiler store four fields and reload them
    /// as one vector on the worker's hot path, a store-forwarding stall on every task.
    #[inline]
    pub(crate) fn meta(&self, home: &Meta) -> Meta {
        let src: *const Meta = if self.job.is_bare() {
            home
        } else {
            // `JobHeader` is `repr(C)` with `meta` first, and `UnsafeCell` is transparent:
            // the header's metadata sits at the job's address.
            self.job.untagged().cast::<Meta>()
        };
        // SAFETY: either `home`, or (type invariant) the header of a live job that is not
        // bare, which only the thread holding this Task touches.
        unsafe { src.read() }
    }

    /// Replaces the task's metadata.
    ///
    /// # Panics
    /// On a bare job, which has no header (never happens: only tasks from injectors, which
    /// never hold bare jobs, get their metadata changed).
    #[inline]
    pub(crate) fn set_meta(&self, meta: Meta) {
        assert!(!self.job.is_bare(), "a bare job has no header to write");
        // SAFETY: as in `meta`.
        unsafe { *(*self.job.untagged().cast::<JobHeader>()).meta.get() = meta }
    }
}

/// Metadata of the task running on the current worker, from [`current_task`](crate::current_task).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new()
///     .preset("s1").no_policy().build()?;
/// // From outside the pool: a node's injector, whose node becomes the task's origin (a
/// // worker of another node that takes it moves it: one migration).
/// let info = pool.install(|| zonal::runtime::current_task()).unwrap();
/// assert!(info.origin.index() < 16 && info.migrations <= 1);
/// assert_eq!((info.group, info.weight), (None, 1024));
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TaskInfo {
    /// The node its computation is rooted on: where its data lives (children inherit it).
    pub origin: NodeId,
    /// How many times it moved between workers (a continuation inherits the count; a child
    /// starts at 0).
    pub migrations: u32,
    /// Whether its computation's origin was placed (named with `spawn_on`, an origin option,
    /// `spawn_pinned` or a node part of a parallel iterator, or inherited from such a task)
    /// rather than chosen by the pool for a call from outside it.
    pub placed: bool,
    /// Its thread group, if any.
    pub group: Option<u32>,
    /// Its CFS weight.
    pub weight: u32,
}

impl TaskInfo {
    pub(crate) fn from_meta(m: Meta) -> Self {
        Self {
            origin: NodeId(m.origin),
            migrations: u32::from(m.migrations),
            placed: m.placed(),
            group: (m.group != NO_GROUP).then_some(m.group),
            weight: m.weight,
        }
    }
}

/// Options for one spawned task: origin node, group, weight, and whether it continues the
/// task running now (inheriting its origin and migration count, so that it can age).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::TaskOptions;
/// let opts = TaskOptions::new().group(3).weight(2048);
/// assert_eq!(opts.get_group(), Some(3));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskOptions {
    origin: Option<NodeId>,
    group: Option<u32>,
    weight: Option<u32>,
    continuation: bool,
}

impl TaskOptions {
    /// Default options: the parent's origin (a child of the task running now; from outside
    /// the pool, the node the pool routes it to), group and weight.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            origin: None,
            group: None,
            weight: None,
            continuation: false,
        }
    }

    /// Names the origin node (where the task's data lives): the task is the placed root of
    /// a computation of its own, which its children inherit.
    #[must_use]
    pub const fn origin(mut self, node: NodeId) -> Self {
        self.origin = Some(node);
        self
    }

    /// Puts the task in a thread group.
    #[must_use]
    pub const fn group(mut self, group: u32) -> Self {
        self.group = Some(group);
        self
    }

    /// Sets the CFS weight (see [`zonal_policy::nice_to_weight`]).
    #[must_use]
    pub const fn weight(mut self, weight: u32) -> Self {
        self.weight = Some(weight);
        self
    }

    /// Makes the task a continuation of the one running now: it keeps that task's origin,
    /// migration count, group and weight (a long job cut into slices ages like one task).
    #[must_use]
    pub const fn continuation(mut self) -> Self {
        self.continuation = true;
        self
    }

    /// The group set, if any.
    #[must_use]
    pub const fn get_group(&self) -> Option<u32> {
        self.group
    }

    /// The origin these options name, if any.
    pub(crate) const fn named_origin(&self) -> Option<NodeId> {
        self.origin
    }

    /// The metadata of a task spawned with these options by a thread whose current task is
    /// `parent` (none: a thread outside the pool), or pinned to a worker of node `pinned`.
    /// A named origin (or the pinned worker's node) starts a placed root; otherwise the
    /// task is a child of `parent` (its origin), or, from outside, has no origin yet
    /// ([`NO_ORIGIN`]: the router picks one).
    pub(crate) fn resolve(&self, parent: Option<Meta>, pinned: Option<u32>) -> Meta {
        let mut m = match parent {
            Some(p) if self.continuation => p,
            Some(p) => Meta::child_of(&p),
            None => Meta::fresh(NO_ORIGIN),
        };
        if let Some(o) = self.origin.map(|o| o.0).or(pinned) {
            m.origin = o;
            m.flags |= PLACED;
        }
        if let Some(g) = self.group {
            m.group = g;
        }
        if let Some(w) = self.weight {
            m.weight = w;
        }
        m
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn meta_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Meta>(), 16);
    }

    #[test]
    fn options_resolve_against_the_parent() {
        let parent = Meta {
            origin: 3,
            migrations: 2,
            flags: 0,
            group: 7,
            weight: 2048,
        };
        // A child: the parent's origin, placed flag, group and weight, never migrated.
        let m = TaskOptions::new().resolve(Some(parent), None);
        assert_eq!(
            m,
            Meta {
                migrations: 0,
                ..parent
            }
        );
        let placed = Meta {
            flags: PLACED,
            ..parent
        };
        assert!(TaskOptions::new().resolve(Some(placed), None).placed());
        // A continuation keeps everything.
        assert_eq!(
            TaskOptions::new()
                .continuation()
                .resolve(Some(parent), None),
            parent
        );
        // Explicit options win; a named origin is placed.
        let m = TaskOptions::new()
            .origin(NodeId(1))
            .group(2)
            .weight(10)
            .resolve(Some(parent), None);
        assert_eq!((m.origin, m.group, m.weight, m.placed()), (1, 2, 10, true));
        // Pinned to a worker of node 5: placed there.
        let m = TaskOptions::new().resolve(Some(parent), Some(5));
        assert_eq!((m.origin, m.migrations, m.placed()), (5, 0, true));
        // From outside a pool: no origin until the router picks one.
        let m = TaskOptions::new().resolve(None, None);
        assert_eq!((m.origin, m.placed()), (NO_ORIGIN, false));
    }

    #[test]
    fn a_placed_fresh_task_is_represented_but_not_bare() {
        let placed = Meta {
            flags: PLACED,
            ..Meta::fresh(2)
        };
        assert!(placed.is_representative_at(2) && !placed.is_fresh_at(2));
        assert!(!placed.is_representative_at(3));
        assert!(!Meta {
            migrations: 1,
            ..Meta::fresh(2)
        }
        .is_representative_at(2));
        assert!(!Meta {
            group: 4,
            ..Meta::fresh(2)
        }
        .is_representative_at(2));
        assert!(!Meta {
            weight: 2048,
            ..Meta::fresh(2)
        }
        .is_representative_at(2));
    }

    #[test]
    fn moves_saturate() {
        let m = Meta {
            migrations: u16::MAX,
            ..Meta::fresh(0)
        };
        assert_eq!(m.moved().migrations, u16::MAX);
        assert_eq!(Meta::fresh(0).moved().migrations, 1);
    }

    #[test]
    fn policy_view_maps_every_field() {
        let m = Meta {
            origin: 4,
            migrations: 1,
            flags: PLACED,
            group: NO_GROUP,
            weight: 99,
        };
        let t = m.to_policy(11, CpuId(2));
        assert_eq!(t.origin, NodeId(4));
        assert_eq!(t.cpu, CpuId(2));
        assert_eq!(t.migrations, 1);
        assert_eq!(t.weight, 99);
        assert_eq!(t.group, None);
        assert!(t.migratable && !t.running);
        assert!(TaskInfo::from_meta(m).placed);
    }
}
