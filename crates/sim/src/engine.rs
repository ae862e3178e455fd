//! The event loop: arrivals, run segments, I/O completions and ticks, with every balancing
//! decision asked of the policy.
//!
//! # One run, step by step
//!
//! 1. Every process gets an `Arrive` event; every CPU a `Tick` at the first tick. Each
//!    CPU's balancing state (intervals, busy factor) is the policy's
//!    [`BalanceSide::new_state`](zonal_policy::BalanceSide::new_state).
//! 2. **Arrive**: the policy's [`BalanceSide::place`](zonal_policy::BalanceSide::place) picks the CPU (fork/exec balancing) from
//!    the parent CPU. The process's origin — and, until its pages move, its memory node —
//!    is the parent's node, or with [`OriginAt::Placement`] the chosen CPU's node.
//! 3. **Dispatch** (a CPU with a queue and nothing running): the head of the queue runs
//!    for `min(slice, what its burst still needs)`, after paying any pending costs (the CPU's
//!    balancing time, the task's migration and page-move costs). Its work progresses at
//!    `1 / slowdown` where the slowdown follows the NUMA factor between its memory node and
//!    the CPU's node ([`CostModel::slowdown`]).
//! 4. **SegmentEnd**: the burst finished (the process starts an I/O wait or ends) or the
//!    slice expired (the task goes to the tail if others wait). If the queue is now empty the
//!    policy's [`BalanceSide::idle_balance`](zonal_policy::BalanceSide::idle_balance) runs (new-idle balancing); then the CPU dispatches.
//! 5. **IoDone**: the policy's [`BalanceSide::select_wake`](zonal_policy::BalanceSide::select_wake)
//!    picks the CPU the process wakes on, from the CPU it last ran on, which is also the
//!    waker (the CPU that submitted the I/O completes it); a steal-only policy gets
//!    [`wake_near_prev`](zonal_policy::wake_near_prev) (the last CPU if idle, else an idle
//!    CPU of its node, else the last CPU). A wake-up on another node is a migration, booked as
//!    a balancer's are (counts by level, cost, ageing, pages following an aged process, the
//!    migration log) and also counted in `RunStats::wake_migrations`.
//!    Each segment's run time (from the end of its pending costs) is booked to
//!    `RunStats::run_us` and, by the level of the CPU's node relative to the process's
//!    origin, to `RunStats::run_time_by_level`.
//! 6. **Tick**: the policy's [`BalanceSide::balance`](zonal_policy::BalanceSide::balance) runs for the CPU; the next tick is
//!    scheduled at the earliest `next_due_us` of the CPU's levels (as the policy left them),
//!    rounded up to the tick grid, and at least one tick later.
//!
//! ## Why every tick is kept
//!
//! `next_due_us` is a level's due time for an *idle* CPU; a busy CPU is due 16× later
//! ([`LevelState::due_at`](zonal_policy::LevelState::due_at)). Sleeping a busy CPU until
//! `due_at(true)` would not be equivalent: the CPU may go idle in between (and be due
//! earlier), and the order of events at the same µs is the order they were scheduled in, so
//! a tick scheduled earlier than before would move ahead of events it used to follow. The
//! ticks stay; instead a tick with no level due is cheap: the Linux-family policies return
//! after a few comparisons without reading any other CPU's load, and `Engine::apply`
//! returns at once for a pass that did nothing.
//!
//! # Automatic NUMA balancing
//!
//! With [`SimConfig::numa_balancing`] set (the policy config's `numa_balancing`, Linux's
//! `kernel.numa_balancing`), each process keeps a [`NumaTaskState`] from its arrival. When a
//! run segment stops (slice end, burst end, or an active-balance cut), the engine asks the
//! policy crate's [`NumaBalancing::scan_due`] with the process's CPU time (`run_us`) and
//! the wall clock; if a scan is due it calls [`NumaBalancing::scan`] with the node of the
//! CPU it ran on and its memory node, and when the rule says so the pages move there: the
//! same RSS at the same throughput as an aged task's (`CostModel::page_migration_ns`,
//! charged to the process before it next runs), counted in `page_moves` and, apart, in
//! `numa_balancing_page_moves`. Linux checks at every tick of the running task
//! (`task_tick_numa`); checking at segment ends makes a scan up to one slice (100 ms) late.
//! A process that has finished its last burst does not scan (Linux skips exiting tasks).
//!
//! Migrations a pass asks for are applied in order. A running task may be moved (Linux's
//! active balance): its segment is cut short and accounted. A migration whose task is no
//! longer on `from` is counted as stale and skipped.

use zonal_policy::{
    wake_near_prev, Ageing, AttemptOutcome, BalanceOutcome, BalanceSide, CpuBalanceState, CpuLoad,
    CpuPass, MachineView, Migration, NumaBalancing, NumaTaskState, Placement, Policy, Rng, TaskId,
    TaskMeta,
};
use zonal_topology::{CpuId, Level, Topology};

use crate::cost::{CostModel, Linux26Cost};
use crate::machine::{MachineState, Segment};
use crate::queue::{EventKind, EventQueue};
use crate::stats::{MigrationRecord, ProcRecord, RunResult, RunStats};
use crate::trace::{Piece, Tracer};
use crate::workload::Workload;

/// How to run one simulation.
///
/// ```
/// let cfg = zonal_sim::SimConfig { seed: 7, ..Default::default() };
/// assert!(!cfg.trace);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Seed of the policy's random stream.
    pub seed: u64,
    /// The cost model.
    pub cost: CostModel,
    /// Collect the per-process trace and the migration log.
    pub trace: bool,
    /// Stop at this simulated time, µs, even if processes remain.
    pub time_limit_us: u64,
    /// Which node is a process's origin (and first memory node).
    pub origin_at: OriginAt,
    /// Linux's automatic NUMA balancing, when on (see the module docs); `None` = off.
    pub numa_balancing: Option<NumaBalancing>,
}

/// Where a process's origin node (the node its memory lives on, which the conservative
/// policies keep it near) is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum OriginAt {
    /// The node of the CPU it was forked from: its data lives with its parent, and fork
    /// placement may already start it away from home (the default; docs/DESIGN.md: "where it was
    /// spawned").
    #[default]
    Parent,
    /// The node fork placement chose: its memory is first touched where it starts.
    Placement,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            cost: CostModel::default(),
            trace: false,
            time_limit_us: 3_600_000_000,
            origin_at: OriginAt::Parent,
            numa_balancing: None,
        }
    }
}

/// Which balancer made a call whose outcome [`Engine::apply`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// A CPU about to go idle (new-idle balancing).
    NewIdle,
    /// The periodic balancer at a CPU's tick; `busy` when the CPU was running a task.
    Periodic { busy: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Pending,
    Queued,
    Running,
    Io,
    Done,
}

/// A process's dynamic state.
#[derive(Clone, Copy, Debug)]
struct Proc {
    phase: Phase,
    cpu: u32,
    origin: u32,
    mem_node: u32,
    burst: u32,
    rem_us: u64,
    pending_ns: u64,
    migrations: u32,
    migrated_since_run: bool,
    aged: bool,
    since_us: u64,
    last_ran_us: Option<u64>,
    finish_us: Option<u64>,
    work_us: u64,
    run_us: u64,
}

/// Runs `workload` on `topo` under `policy`.
///
/// ```
/// # use zonal_sim::{simulate, SimConfig, Workload, Burst};
/// # fn demo(policy: &dyn zonal_policy::Policy) {
/// let topo = zonal_topology::presets::preset("s1").unwrap();
/// let mut w = Workload::default();
/// w.push(0, 0, 0.0, &[Burst { cpu_us: 10_000, io_us: 0 }]);
/// let r = simulate(&topo, policy, &w, &SimConfig::default());
/// assert_eq!(r.stats.finished, 1);
/// # }
/// ```
#[must_use]
pub fn simulate(
    topo: &Topology,
    policy: &dyn Policy,
    workload: &Workload,
    cfg: &SimConfig,
) -> RunResult {
    Engine::new(topo, policy, workload, cfg).run()
}

struct Engine<'a> {
    m: MachineState<'a>,
    /// The policy's balance side; `None` for a steal-only policy, which the process model
    /// runs without balancing (new processes start on their parent's CPU).
    balancer: Option<&'a dyn BalanceSide>,
    wl: &'a Workload,
    cost: CostModel,
    /// The policy's ageing rule: an aged process's pages may follow it.
    ageing: Ageing,
    time_limit_us: u64,
    origin_at: OriginAt,
    procs: Vec<Proc>,
    /// `procs × M`: wall time each process ran at each level relative to its origin.
    level_run: Vec<u64>,
    mal: usize,
    level_factor: Vec<f64>,
    states: Vec<CpuBalanceState>,
    rng: Rng,
    q: EventQueue,
    stats: RunStats,
    lb_cost_ns: u64,
    tracer: Option<Tracer>,
    mlog: Vec<MigrationRecord>,
    done: usize,
    touched: Vec<u32>,
    /// The machine's largest SLIT ratio (the cost model's latency mapping reads it).
    farthest: f64,
    /// Automatic NUMA balancing, and each process's history when it is on.
    numa: Option<NumaBalancing>,
    numa_state: Vec<NumaTaskState>,
    /// The 2.6 balancer's cost and load lag, when the cost model has it.
    lb26: Option<Linux26Cost>,
    /// The loads 2.6's periodic balancing reads ([`Linux26Cost::load_lag_us`]).
    lagged: Lagged<'a>,
    /// Time and count of the attempts that found a busiest queue at the current tick (the
    /// CPUs contending for runqueue locks), 2.6 cost only.
    window_attempts: (u64, u64),
    /// Whether the outcome being applied was decided on the lagged loads.
    applying_lagged: bool,
}

/// A snapshot of every CPU's load and queue, refreshed when older than the 2.6 load lag:
/// what 2.6's `find_busiest_group` reads (decayed `cpu_load[idx]`, updated per tick), as
/// sample-and-hold ([`Linux26Cost::load_lag_us`]).
struct Lagged<'t> {
    topo: &'t Topology,
    /// When the snapshot was taken; `None` before the first.
    at_us: Option<u64>,
    now_us: u64,
    loads: Vec<CpuLoad>,
    rq: Vec<Vec<TaskMeta>>,
}

impl<'t> Lagged<'t> {
    fn new(topo: &'t Topology) -> Self {
        Self {
            topo,
            at_us: None,
            now_us: 0,
            loads: Vec::new(),
            rq: Vec::new(),
        }
    }

    /// Refreshes the snapshot from `m` if it is `lag_us` or more old, and sets its clock.
    fn refresh(&mut self, m: &MachineState<'_>, lag_us: u64) {
        let now = m.now_us;
        self.now_us = now;
        if self.at_us.is_some_and(|t| now < t.saturating_add(lag_us)) {
            return;
        }
        self.at_us = Some(now);
        let n = m.cpus.len();
        self.loads.clear();
        self.loads.extend((0..n).map(|c| m.cpu_load(CpuId::new(c))));
        self.rq.resize_with(n, Vec::new);
        for (dst, cs) in self.rq.iter_mut().zip(&m.cpus) {
            dst.clone_from(&cs.rq);
        }
    }
}

impl MachineView for Lagged<'_> {
    fn topology(&self) -> &Topology {
        self.topo
    }

    fn cpu_load(&self, cpu: CpuId) -> CpuLoad {
        self.loads.get(cpu.index()).copied().unwrap_or_default()
    }

    fn tasks(&self, cpu: CpuId) -> &[TaskMeta] {
        self.rq.get(cpu.index()).map_or(&[], Vec::as_slice)
    }

    fn now_us(&self) -> u64 {
        self.now_us
    }
}

impl<'a> Engine<'a> {
    fn new(topo: &'a Topology, policy: &'a dyn Policy, wl: &'a Workload, cfg: &SimConfig) -> Self {
        let n = wl.procs.len();
        let mal = topo.mal_count().max(1);
        let levels = topo.levels();
        let farthest = farthest_ratio(topo);
        let level_factor = (0..mal)
            .map(|l| match (levels.get(l), levels.first()) {
                (Some(&d), Some(&d0)) if d0 > 0 => cfg
                    .cost
                    .latency_ratio(f64::from(d) / f64::from(d0), farthest),
                _ => 1.0,
            })
            .collect();
        let numa_state = match &cfg.numa_balancing {
            Some(nb) => wl.procs.iter().map(|s| nb.new_task(s.arrival_us)).collect(),
            None => Vec::new(),
        };
        let procs = wl
            .procs
            .iter()
            .map(|s| Proc {
                phase: Phase::Pending,
                cpu: s.parent_cpu,
                origin: 0,
                mem_node: 0,
                burst: 0,
                rem_us: wl.bursts[s.first_burst as usize].cpu_us,
                pending_ns: 0,
                migrations: 0,
                migrated_since_run: false,
                aged: false,
                since_us: s.arrival_us,
                last_ran_us: None,
                finish_us: None,
                work_us: 0,
                run_us: 0,
            })
            .collect();
        let stats = RunStats {
            procs: n,
            migrations_by_level: vec![0; mal],
            exec_by_level: vec![0; mal],
            placements_by_level: vec![0; mal],
            run_time_by_level: vec![0; mal],
            demand_us: wl.demand_us(),
            ..RunStats::default()
        };
        Self {
            m: MachineState::new(topo),
            balancer: policy.balance_side(),
            wl,
            cost: cfg.cost,
            ageing: policy.steal_side().ageing(),
            time_limit_us: cfg.time_limit_us,
            origin_at: cfg.origin_at,
            procs,
            level_run: vec![0; n * mal],
            mal,
            level_factor,
            states: (0..topo.cpu_count())
                .map(|c| match policy.balance_side() {
                    Some(b) => b.new_state(topo, CpuId::new(c)),
                    None => CpuBalanceState::new(topo, CpuId::new(c)),
                })
                .collect(),
            rng: Rng::new(cfg.seed),
            q: EventQueue::with_capacity(n + 2 * topo.cpu_count()),
            stats,
            lb_cost_ns: 0,
            tracer: cfg.trace.then(|| Tracer::new(n)),
            mlog: Vec::new(),
            done: 0,
            touched: Vec::new(),
            farthest,
            numa: cfg.numa_balancing,
            numa_state,
            lb26: cfg.cost.linux_2_6,
            lagged: Lagged::new(topo),
            window_attempts: (0, 0),
            applying_lagged: false,
        }
    }

    fn run(mut self) -> RunResult {
        self.q
            .set_arrivals(self.wl.procs.iter().map(|s| s.arrival_us));
        let tick = self.tick_us();
        for c in 0..self.m.cpus.len() {
            self.q.push(tick, EventKind::Tick, c as u32, 0);
        }
        let n = self.procs.len();
        while self.done < n {
            let Some(ev) = self.q.pop() else { break };
            if ev.time_us > self.time_limit_us {
                break;
            }
            self.m.now_us = ev.time_us;
            self.stats.events += 1;
            let a = ev.a as usize;
            match ev.kind {
                EventKind::Arrive => self.arrive(a),
                EventKind::SegmentEnd => self.segment_end(a, ev.gen),
                EventKind::IoDone => self.io_done(a),
                EventKind::Tick => self.tick(a),
            }
        }
        self.finish()
    }

    // --- Events -------------------------------------------------------------------------

    fn arrive(&mut self, p: usize) {
        let topo = self.m.topo;
        let parent = CpuId(self.wl.procs[p].parent_cpu);
        let mut meta = TaskMeta::new(TaskId(p as u64), topo.node_of(parent), parent);
        let placed = match self.balancer {
            Some(b) => b.place(&self.m, parent, &meta, &mut self.rng),
            None => Placement {
                cpu: parent,
                level: Level::LOCAL,
            },
        };
        let cpu = if placed.cpu.index() < topo.cpu_count() {
            placed.cpu
        } else {
            parent
        };
        self.stats.placements_by_level[topo.level_between(parent, cpu).index()] += 1;
        let node = match self.origin_at {
            OriginAt::Parent => topo.node_of(parent),
            OriginAt::Placement => topo.node_of(cpu),
        };
        meta.origin = node;
        meta.cpu = cpu;
        let pr = &mut self.procs[p];
        pr.origin = node.0;
        pr.mem_node = node.0;
        pr.cpu = cpu.0;
        pr.phase = Phase::Queued;
        pr.since_us = self.m.now_us;
        self.enqueue(cpu.index(), meta);
        self.dispatch(cpu.index());
    }

    fn segment_end(&mut self, c: usize, gen: u32) {
        let cs = &self.m.cpus[c];
        if gen != cs.gen || !cs.running {
            return;
        }
        let seg = cs.seg;
        let p = cs.rq[0].id.0 as usize;
        let rem = self.procs[p].rem_us;
        let work = if seg.completes {
            rem
        } else {
            let w = (seg.end_us - seg.work_start_us) as f64 / seg.slowdown;
            (w as u64).min(rem.saturating_sub(1))
        };
        self.stop_running(c, p, work);
        let now = self.m.now_us;
        if self.procs[p].rem_us == 0 {
            let meta = self.m.cpus[c].rq.remove(0);
            self.m.cpus[c].weighted -= u64::from(meta.weight);
            let spec = self.wl.procs[p];
            let b = self.procs[p].burst as usize;
            let burst = self.wl.bursts[spec.first_burst as usize + b];
            let pr = &mut self.procs[p];
            pr.burst += 1;
            if pr.burst < spec.bursts {
                pr.phase = Phase::Io;
                pr.since_us = now;
                pr.rem_us = self.wl.bursts[(spec.first_burst + pr.burst) as usize].cpu_us;
                self.q
                    .push(now + burst.io_us, EventKind::IoDone, p as u32, 0);
            } else {
                pr.phase = Phase::Done;
                pr.finish_us = Some(now);
                self.done += 1;
            }
        } else {
            let rq = &mut self.m.cpus[c].rq;
            if rq.len() > 1 {
                let t = rq.remove(0);
                rq.push(t);
            }
            let pr = &mut self.procs[p];
            pr.phase = Phase::Queued;
            pr.since_us = now;
        }
        self.m.touch(c);
        if let (true, Some(balancer)) = (self.m.cpus[c].rq.is_empty(), self.balancer) {
            let out =
                balancer.idle_balance(CpuPass::new(&self.m, &mut self.states[c], &mut self.rng));
            self.apply(out, Call::NewIdle);
        }
        self.dispatch(c);
    }

    fn io_done(&mut self, p: usize) {
        let now = self.m.now_us;
        let topo = self.m.topo;
        let pr = self.procs[p];
        debug_assert_eq!(pr.phase, Phase::Io);
        self.trace(
            p,
            Piece::Io {
                us: now - pr.since_us,
            },
        );
        let prev = CpuId(pr.cpu);
        let mut meta = TaskMeta {
            migrations: pr.migrations,
            last_ran_us: pr.last_ran_us,
            ..TaskMeta::new(TaskId(p as u64), zonal_topology::NodeId(pr.origin), prev)
        };
        // The waker of an I/O completion is the CPU that submitted it (`prev`): see the
        // policy's wake-up module docs.
        let woken = match self.balancer {
            Some(b) => b.select_wake(
                &self.m,
                zonal_policy::WakeUp {
                    task: &meta,
                    prev,
                    waker: prev,
                },
                &mut self.rng,
            ),
            None => wake_near_prev(&self.m, &meta, prev),
        };
        let target = if woken.index() < topo.cpu_count() {
            woken.index()
        } else {
            prev.index()
        };
        meta.cpu = CpuId::new(target);
        if topo.node_of(meta.cpu) != topo.node_of(prev) {
            // Waking on another node moves the task: a migration like a balancer's.
            self.stats.wake_migrations += 1;
            self.count_migration(p, prev.index(), target, &mut meta, false);
        }
        let pr = &mut self.procs[p];
        pr.cpu = target as u32;
        pr.phase = Phase::Queued;
        pr.since_us = now;
        self.enqueue(target, meta);
        self.dispatch(target);
    }

    fn tick(&mut self, c: usize) {
        let busy = !self.m.is_idle(c);
        let out = match (self.balancer, self.lb26) {
            (Some(b), Some(lb)) if lb.load_lag_us > 0 => {
                // 2.6: periodic balancing reads lagged loads (`Linux26Cost::load_lag_us`).
                self.lagged.refresh(&self.m, lb.load_lag_us);
                b.balance(CpuPass::new(
                    &self.lagged,
                    &mut self.states[c],
                    &mut self.rng,
                ))
            }
            (Some(b), _) => b.balance(CpuPass::new(&self.m, &mut self.states[c], &mut self.rng)),
            (None, _) => BalanceOutcome::default(),
        };
        self.applying_lagged = self.lb26.is_some_and(|lb| lb.load_lag_us > 0);
        self.apply(out, Call::Periodic { busy });
        self.applying_lagged = false;
        let tick = self.tick_us();
        let now = self.m.now_us;
        let due = self.states[c]
            .levels
            .iter()
            .map(|l| l.next_due_us)
            .min()
            .unwrap_or(0);
        let next = due.max(now + tick).div_ceil(tick) * tick;
        self.q.push(next, EventKind::Tick, c as u32, 0);
    }

    // --- Scheduling ---------------------------------------------------------------------

    fn enqueue(&mut self, c: usize, meta: TaskMeta) {
        let cs = &mut self.m.cpus[c];
        cs.weighted += u64::from(meta.weight);
        cs.rq.push(meta);
        self.m.touch(c);
    }

    /// Starts the head of `c`'s queue if `c` runs nothing.
    fn dispatch(&mut self, c: usize) {
        let now = self.m.now_us;
        let topo = self.m.topo;
        let cs = &mut self.m.cpus[c];
        if cs.running || cs.rq.is_empty() {
            return;
        }
        cs.running = true;
        cs.rq[0].running = true;
        let p = cs.rq[0].id.0 as usize;
        let overhead_ns = std::mem::take(&mut cs.overhead_ns);
        let pr = &mut self.procs[p];
        debug_assert_eq!(pr.phase, Phase::Queued);
        let since = pr.since_us;
        let overhead_ns = overhead_ns + std::mem::take(&mut pr.pending_ns);
        let overhead_us = overhead_ns.div_ceil(1000);
        let node = topo.node_of(CpuId::new(c));
        let factor = self.cost.latency_ratio(
            topo.numa_factor(zonal_topology::NodeId(pr.mem_node), node),
            self.farthest,
        );
        let slowdown = self.cost.slowdown(self.wl.procs[p].mem_bound, factor);
        let need = ((pr.rem_us as f64 * slowdown).ceil() as u64).max(1);
        let len = need.min(self.cost.slice_us.max(1));
        pr.phase = Phase::Running;
        pr.migrated_since_run = false;
        let work_start = now + overhead_us;
        let seg = Segment {
            start_us: now,
            work_start_us: work_start,
            end_us: work_start + len,
            slowdown,
            completes: len == need,
        };
        cs.seg = seg;
        cs.gen = cs.gen.wrapping_add(1);
        let gen = cs.gen;
        self.q
            .push(seg.end_us, EventKind::SegmentEnd, c as u32, gen);
        self.stats.overhead_us += overhead_us;
        self.m.touch(c);
        self.trace(
            p,
            Piece::Wait {
                cpu: c as u32,
                us: now - since,
            },
        );
    }

    /// Accounts the running task of `c` (process `p`) for `work` µs of work up to now and
    /// takes it off the CPU (it stays in the queue).
    fn stop_running(&mut self, c: usize, p: usize, work: u64) {
        let now = self.m.now_us;
        let topo = self.m.topo;
        let cs = &mut self.m.cpus[c];
        let seg = cs.seg;
        cs.running = false;
        cs.rq[0].running = false;
        cs.rq[0].last_ran_us = Some(now);
        let pr = &mut self.procs[p];
        pr.rem_us -= work;
        pr.work_us += work;
        let ran = now.saturating_sub(seg.work_start_us);
        pr.run_us += ran;
        pr.last_ran_us = Some(now);
        let lvl = topo
            .node_level(
                zonal_topology::NodeId(pr.origin),
                topo.node_of(CpuId::new(c)),
            )
            .map_or(self.mal - 1, |l| l.index().min(self.mal - 1));
        self.level_run[p * self.mal + lvl] += now - seg.start_us;
        self.stats.run_time_by_level[lvl] += ran;
        self.trace(
            p,
            Piece::Run {
                cpu: c as u32,
                us: now - seg.start_us,
            },
        );
        if self.numa.is_some() {
            self.numa_scan(c, p);
        }
    }

    /// Automatic NUMA balancing after process `p` ran on CPU `c` (module docs).
    fn numa_scan(&mut self, c: usize, p: usize) {
        let Some(nb) = self.numa else { return };
        let now = self.m.now_us;
        let topo = self.m.topo;
        let pr = &mut self.procs[p];
        let spec = &self.wl.procs[p];
        if pr.rem_us == 0 && pr.burst + 1 >= spec.bursts {
            return; // exiting
        }
        let st = &mut self.numa_state[p];
        if !nb.scan_due(st, pr.run_us, now) {
            return;
        }
        self.stats.numa_scans += 1;
        let cpu_node = topo.node_of(CpuId::new(c));
        let out = nb.scan(
            st,
            now,
            cpu_node,
            zonal_topology::NodeId(pr.mem_node),
            crate::cost::PROCESS_RSS_BYTES,
            topo.node_count(),
        );
        if let Some(to) = out.move_pages_to {
            pr.mem_node = to.0;
            let ns = self.cost.page_migration_ns;
            pr.pending_ns += ns;
            self.stats.page_moves += 1;
            self.stats.page_move_ns += ns;
            self.stats.numa_balancing_page_moves += 1;
            self.stats.numa_balancing_page_move_ns += ns;
        }
    }

    // --- Balancing ----------------------------------------------------------------------

    fn apply(&mut self, out: BalanceOutcome, call: Call) {
        if out.attempts.is_empty() && out.migrations.is_empty() && out.refused.total() == 0 {
            // A pass that did nothing (most ticks): nothing to charge, count or move.
            return;
        }
        let newidle = call == Call::NewIdle;
        let counted_call = !out.attempts.is_empty();
        let migrations_before = self.stats.migrations;
        for a in &out.attempts {
            self.stats.lb_passes += 1;
            self.stats.lb_passes_newidle += u64::from(newidle);
            if a.outcome != AttemptOutcome::Balanced {
                self.stats.lb_attempts += 1;
                self.stats.lb_attempts_unsuccessful += u64::from(a.failed());
            }
            let f = self.level_factor[a.level.index().min(self.mal - 1)];
            let ns = self.cost.attempt_ns(a.cpus_scanned, f) + self.lb26_ns(a, f);
            self.lb_cost_ns += ns;
            if let Some(cs) = self.m.cpus.get_mut(a.cpu.index()) {
                cs.overhead_ns += ns;
            }
        }
        self.stats.refused.merge(&out.refused);
        self.touched.clear();
        // Imbalanced attempts (`RunStats::imbalanced_attempts`): the migrations of an attempt
        // follow it in `out.migrations`, `moved` of them; it succeeded if one of them was
        // performed.
        let linked =
            out.attempts.iter().map(|a| a.moved as usize).sum::<usize>() == out.migrations.len();
        let mut next = 0;
        for a in &out.attempts {
            if a.outcome == AttemptOutcome::Balanced {
                continue;
            }
            self.stats.imbalanced_attempts += 1;
            let moved = if linked {
                let k = a.moved as usize;
                let before = self.stats.migrations;
                for mig in &out.migrations[next..next + k] {
                    self.migrate(mig, newidle);
                }
                next += k;
                self.stats.migrations > before
            } else {
                a.succeeded()
            };
            self.stats.imbalanced_failed += u64::from(!moved);
        }
        for mig in out.migrations.iter().skip(if linked { next } else { 0 }) {
            self.migrate(mig, newidle);
        }
        let moved_none = self.stats.migrations == migrations_before;
        if counted_call {
            self.stats.lb_calls += 1;
            self.stats.lb_calls_unsuccessful += u64::from(moved_none);
            self.stats.lb_calls_balanced += u64::from(
                out.attempts
                    .iter()
                    .all(|a| a.outcome == AttemptOutcome::Balanced),
            );
            // Table 1's count (`RunStats::t1_attempts`, the stats module's docs): a periodic
            // call of a busy CPU, balanced or not; failed if it moved nothing.
            if call == (Call::Periodic { busy: true }) {
                self.stats.t1_attempts += 1;
                self.stats.t1_failed += u64::from(moved_none);
            }
        }
        // Balancing time on a CPU that stays idle is absorbed by idle time.
        for a in &out.attempts {
            let c = a.cpu.index();
            if c < self.m.cpus.len() && self.m.is_idle(c) {
                self.m.cpus[c].overhead_ns = 0;
            }
        }
        for i in 0..self.touched.len() {
            let c = self.touched[i] as usize;
            self.dispatch(c);
        }
    }

    /// The scheduler tick, µs: the 2.6 cost model's ([`Linux26Cost::tick_us`]) when it has
    /// one, else the cost model's.
    fn tick_us(&self) -> u64 {
        self.lb26.map_or(self.cost.tick_us, |lb| lb.tick_us).max(1)
    }

    /// The 2.6 balancer's cost of attempt `a` at a level of relative latency `f`, ns, on top
    /// of [`CostModel::attempt_ns`] ([`Linux26Cost`]): 0 without it, or when the attempt
    /// found the level balanced (2.6's `load_balance` returns before `double_rq_lock`).
    fn lb26_ns(&mut self, a: &zonal_policy::Attempt, f: f64) -> u64 {
        let Some(lb) = self.lb26 else { return 0 };
        if a.outcome == AttemptOutcome::Balanced {
            return 0;
        }
        // CPUs contending for runqueue locks: the attempts already made at this tick (the
        // CPUs whose ticks fall on the same µs balance at once).
        let now = self.m.now_us;
        let (at, n) = self.window_attempts;
        let others = if now == at {
            self.window_attempts.1 = n + 1;
            n
        } else {
            self.window_attempts = (now, 1);
            0
        };
        // Tasks `move_tasks` examined: those it moved, or, when it moved none, every
        // candidate of a busiest queue (at most `nr_migrate`): we charge the moved count plus
        // one, the running task it passes over.
        let examined = u64::from(a.moved) + 1;
        let locked = (lb.double_lock_ns + lb.scan_per_task_ns * examined) as f64 * f;
        locked as u64 + lb.contention_ns * others
    }

    fn migrate(&mut self, mig: &Migration, newidle: bool) {
        let (from, to) = (mig.from.index(), mig.to.index());
        let ncpu = self.m.cpus.len();
        let idx = if from != to && from < ncpu && to < ncpu {
            self.m.cpus[from].rq.iter().position(|t| t.id == mig.task)
        } else {
            None
        };
        // A task the lagged loads showed queued that runs now: `move_tasks` cannot take a
        // running task (only active balance, decided on a running task, may).
        let idx = idx.filter(|&i| {
            !(self.applying_lagged
                && self.m.cpus[from].rq[i].running
                && !self.lagged.rq[from]
                    .iter()
                    .any(|t| t.id == mig.task && t.running))
        });
        let Some(idx) = idx else {
            self.stats.stale_migrations += 1;
            return;
        };
        let p = mig.task.0 as usize;
        let now = self.m.now_us;
        if self.m.cpus[from].rq[idx].running {
            // Active balance: cut the running segment short.
            let cs = &mut self.m.cpus[from];
            let seg = cs.seg;
            cs.gen = cs.gen.wrapping_add(1);
            let rem = self.procs[p].rem_us;
            let w = now.saturating_sub(seg.work_start_us) as f64 / seg.slowdown;
            self.stop_running(from, p, (w as u64).min(rem.saturating_sub(1)));
        } else {
            let since = self.procs[p].since_us;
            self.trace(
                p,
                Piece::Wait {
                    cpu: from as u32,
                    us: now - since,
                },
            );
        }
        let mut meta = self.m.cpus[from].rq.remove(idx);
        self.m.cpus[from].weighted -= u64::from(meta.weight);
        meta.running = false;
        self.count_migration(p, from, to, &mut meta, newidle);
        self.m.touch(from);
        self.enqueue(to, meta);
        self.touched.push(to as u32);
        self.touched.push(from as u32);
    }

    /// Books one migration of process `p` (off every queue, `meta` its queue entry) from CPU
    /// `from` to CPU `to`, for a balance pass and a wake-up on another node alike: the
    /// migration counts (total, by level, futile), its cost, ageing and the pages that
    /// follow an aged process, and the migration log. The caller queues `meta` on `to`.
    fn count_migration(
        &mut self,
        p: usize,
        from: usize,
        to: usize,
        meta: &mut TaskMeta,
        newidle: bool,
    ) {
        let now = self.m.now_us;
        let topo = self.m.topo;
        let to_node = topo.node_of(CpuId::new(to));
        let pr = &mut self.procs[p];
        if pr.migrated_since_run {
            self.stats.futile_migrations += 1;
        }
        pr.migrated_since_run = true;
        pr.migrations += 1;
        meta.migrations += 1;
        meta.cpu = CpuId::new(to);
        let level = topo.level_between(CpuId::new(from), CpuId::new(to)).index();
        self.stats.migrations += 1;
        self.stats.migrations_by_level[level.min(self.mal - 1)] += 1;
        let hot = pr
            .last_ran_us
            .is_some_and(|t| (now - t) * 1000 < self.cost.cache_hot_ns);
        let mem_factor = self.cost.latency_ratio(
            topo.numa_factor(zonal_topology::NodeId(pr.mem_node), to_node),
            self.farthest,
        );
        pr.pending_ns += self.cost.migration_ns(hot, mem_factor);
        if !pr.aged && self.ageing.is_aged_after(pr.migrations) {
            pr.aged = true;
            self.stats.aged_tasks += 1;
            if self.cost.pages_follow_aged && pr.mem_node != to_node.0 {
                pr.mem_node = to_node.0;
                pr.pending_ns += self.cost.page_migration_ns;
                self.stats.pages_migrated += 1;
                self.stats.page_moves += 1;
                self.stats.page_move_ns += self.cost.page_migration_ns;
            }
        }
        pr.cpu = to as u32;
        pr.phase = Phase::Queued;
        pr.since_us = now;
        if self.tracer.is_some() {
            self.mlog.push(MigrationRecord {
                time_us: now,
                proc: p as u32,
                from: from as u32,
                to: to as u32,
                level: level as u8,
                newidle,
            });
        }
    }

    // --- Records ------------------------------------------------------------------------

    #[inline]
    fn trace(&mut self, p: usize, piece: Piece) {
        if let Some(t) = &mut self.tracer {
            match piece {
                Piece::Wait { us: 0, .. } | Piece::Run { us: 0, .. } => {}
                _ => t.add(p, piece),
            }
        }
    }

    fn finish(mut self) -> RunResult {
        let mut tat_sum = 0.0;
        let mut records = Vec::with_capacity(self.procs.len());
        for (p, pr) in self.procs.iter().enumerate() {
            let spec = &self.wl.procs[p];
            let row = &self.level_run[p * self.mal..(p + 1) * self.mal];
            let ran_most = crate::stats::ran_most_level(row);
            if let Some(l) = ran_most {
                self.stats.exec_by_level[l] += 1;
            }
            let main = ran_most.unwrap_or(0);
            if let Some(f) = pr.finish_us {
                self.stats.finished += 1;
                tat_sum += (f - spec.arrival_us) as f64;
                self.stats.makespan_us = self.stats.makespan_us.max(f);
            }
            self.stats.work_us += pr.work_us;
            self.stats.run_us += pr.run_us;
            records.push(ProcRecord {
                arrival_us: spec.arrival_us,
                finish_us: pr.finish_us,
                demand_us: spec.demand_us,
                work_us: pr.work_us,
                run_us: pr.run_us,
                migrations: pr.migrations,
                origin: pr.origin,
                main_level: main as u8,
            });
        }
        if self.stats.finished > 0 {
            self.stats.avg_tat_us = tat_sum / self.stats.finished as f64;
        }
        self.stats.lb_cost_us = self.lb_cost_ns as f64 / 1000.0;
        RunResult {
            stats: self.stats,
            procs: records,
            trace: self.tracer.map(|t| t.render()),
            migration_log: self.mlog,
        }
    }
}

/// The largest SLIT ratio `d(a, b) / d(a, a)` between two nodes of `topo` (1 for one node).
fn farthest_ratio(topo: &Topology) -> f64 {
    let n = topo.node_count();
    let mut far: f64 = 1.0;
    for a in 0..n {
        for b in 0..n {
            let a = zonal_topology::NodeId(a as u32);
            far = far.max(topo.numa_factor(a, zonal_topology::NodeId(b as u32)));
        }
    }
    far
}
