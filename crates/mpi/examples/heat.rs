//! A distributed 2D heat (Jacobi) stencil: one Zonal pool per MPI rank — a cluster user's
//! starting point.
//!
//! ```sh
//! cargo build --release -p zonal-mpi --example heat
//! mpirun -np 2 --oversubscribe target/release/examples/heat            # 2 ranks, this machine
//! mpirun -np 4 --bind-to numa target/release/examples/heat --rows 2048 --cols 2048 --steps 200
//! ```
//!
//! The global grid (`--rows` × `--cols`, its outer cells fixed: the top edge hot, the left
//! edge warm) is cut into blocks of whole rows, one per rank. Each rank keeps its rows and
//! two ghost rows in node-local buffers ([`NodeBuffer`], one per node of its pool, written
//! first by that node's workers) and runs `--steps` Jacobi sweeps on its pool, under the
//! conservative policy (`--policy conservative-soft`, the default, or `conservative-hard`).
//! Each step, [`zonal_mpi::overlap`] computes the interior rows on the pool while the main
//! thread (the only one that calls MPI: funneled) exchanges the halo rows with the
//! neighbouring ranks (`Isend`/`Irecv`, then their waits); the two boundary rows, which need
//! the halos, are computed after. Ranks the launcher did not bind split their machine's
//! CPUs ([`zonal_mpi::local_ranks`]).
//!
//! Rank 0 gathers the grid, runs the whole grid serially and compares: the last line it
//! prints is `heat: answer ok (max |diff| <x> against the serial run)` or `heat: answer
//! WRONG ...`, and every rank exits 1 on a wrong answer. Before that, for each rank in rank
//! order, a report block and the line
//! `heat: rank=<r> size=<s> allowed=<cpulist> nodes=<nodelist> workers=<cpulist>`
//! (the process's allowed CPUs, the NUMA nodes they cover, the CPUs the pool's workers are
//! allowed as the kernel reports them; kernel list format, e.g. `0-3,8`). Bad flags exit 2.

use std::ops::Range;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use zonal_mpi::mpi::point_to_point::{Destination, Source};
use zonal_mpi::mpi::topology::{Communicator, SimpleCommunicator};
use zonal_mpi::mpi::traits::Root;
use zonal_runtime::{NodeBuffer, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

/// A distributed 2D heat stencil over MPI ranks, one Zonal pool per rank.
#[derive(Parser, Debug)]
#[command(name = "heat")]
struct Args {
    /// Rows of the global grid (at least 3, and at least the number of ranks).
    #[arg(long, default_value_t = 96)]
    rows: usize,
    /// Columns of the global grid (at least 3).
    #[arg(long, default_value_t = 96)]
    cols: usize,
    /// Jacobi sweeps.
    #[arg(long, default_value_t = 50)]
    steps: usize,
    /// The pool's policy (the conservative ones of Zonal's catalogue).
    #[arg(long, default_value = "conservative-soft",
          value_parser = ["conservative-soft", "conservative-hard"])]
    policy: String,
    /// Workers per rank (default: one per CPU of the rank's share).
    #[arg(long)]
    threads: Option<usize>,
    /// Each rank's pool over a virtual machine from Zonal's presets instead of this one
    /// (workers unpinned; each of its nodes holds a part of the block): the multi-node
    /// layout on any machine, for testing.
    #[arg(long, value_parser = ["s1", "s2", "s3"])]
    preset: Option<String>,
}

/// At most this many cells in one grid (8 bytes each, twice per rank, once more for the
/// serial run on rank 0).
const MAX_CELLS: usize = 1 << 28;
/// Rows one task sweeps without splitting further.
const GRAIN_ROWS: usize = 4;
/// Message tags: a rank's last row to the rank below, its first row to the rank above,
/// its block to rank 0, its report to rank 0.
const TAG_DOWN: i32 = 1;
const TAG_UP: i32 = 2;
const TAG_GRID: i32 = 3;
const TAG_REPORT: i32 = 4;

impl Args {
    fn check(&self) -> Result<(), String> {
        if self.rows < 3 || self.cols < 3 {
            return Err(format!(
                "the grid must be at least 3 x 3 (--rows {} --cols {})",
                self.rows, self.cols
            ));
        }
        if self
            .rows
            .checked_mul(self.cols)
            .is_none_or(|c| c > MAX_CELLS)
        {
            return Err(format!("--rows x --cols is at most {MAX_CELLS} cells"));
        }
        if self.threads == Some(0) {
            return Err("--threads must be at least 1".into());
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = args.check() {
        eprintln!("heat: {e}");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("heat: {e}");
            ExitCode::from(1)
        }
    }
}

/// The fixed geometry of one rank's block.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    /// Global rows and columns.
    rows: usize,
    cols: usize,
    /// The first global row this rank owns; it owns `n` rows. Storage row `k` (0..n+2) is
    /// global row `lo + k - 1`: rows 0 and n+1 are the ghosts.
    lo: usize,
    n: usize,
}

/// The initial value of global cell (i, j): the top edge hot, the left edge warm.
fn initial(i: usize, j: usize) -> f64 {
    if i == 0 {
        100.0
    } else if j == 0 {
        50.0
    } else {
        0.0
    }
}

/// Row `gi` of the next grid from the rows above, at and below it in the current one. The
/// outer rows and columns are fixed. The one kernel of both the distributed and the serial
/// run, so that both compute the same bits.
fn update_row(
    rows: usize,
    gi: usize,
    up: Option<&[f64]>,
    mid: &[f64],
    down: Option<&[f64]>,
    out: &mut [f64],
) {
    let cols = mid.len();
    match (up, down) {
        (Some(up), Some(down)) if gi != 0 && gi != rows - 1 => {
            out[0] = mid[0];
            out[cols - 1] = mid[cols - 1];
            for j in 1..cols - 1 {
                out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
            }
        }
        _ => out.copy_from_slice(mid),
    }
}

/// One rank's rows in node-local parts, ghost rows included.
struct Block {
    cols: usize,
    parts: Vec<Part>,
}

/// The storage rows `rows` of a block, in a buffer on `node`.
struct Part {
    node: NodeId,
    rows: Range<usize>,
    buf: NodeBuffer<f64>,
}

impl Block {
    /// The block of `g`, each node's part allocated on the node and first written by its
    /// workers (the same cut as the pool's own, `ThreadPool::node_partition`).
    fn new(pool: &ThreadPool, g: Geometry) -> Result<Self, String> {
        let mut parts = Vec::new();
        for (node, rows) in pool.node_partition(0..g.n + 2) {
            if rows.is_empty() {
                continue;
            }
            let start = rows.start;
            let buf = NodeBuffer::try_new_in(pool, node, rows.len() * g.cols, |x| {
                let k = start + x / g.cols;
                match (g.lo + k).checked_sub(1) {
                    Some(gi) if (1..=g.n).contains(&k) => initial(gi, x % g.cols),
                    _ => 0.0,
                }
            })
            .map_err(|e| format!("allocating the block on node {}: {e}", node.0))?;
            parts.push(Part { node, rows, buf });
        }
        if parts.is_empty() {
            return Err("the pool has no node with workers".into());
        }
        Ok(Self {
            cols: g.cols,
            parts,
        })
    }

    /// Every storage row, ghosts included.
    fn rows(&self) -> Rows<'_> {
        Rows {
            cols: self.cols,
            parts: self
                .parts
                .iter()
                .map(|p| (p.rows.start, &p.buf[..]))
                .collect(),
        }
    }

    /// The two ghost rows (top, bottom), writable, and the owned rows beside them.
    fn split_ghosts(&mut self) -> (&mut [f64], &mut [f64], Rows<'_>) {
        let cols = self.cols;
        let mut slices: Vec<(usize, &mut [f64])> = self
            .parts
            .iter_mut()
            .map(|p| (p.rows.start, &mut p.buf[..]))
            .collect();
        let (start, first) = slices.remove(0);
        let (top, rest) = first.split_at_mut(cols);
        slices.insert(0, (start + 1, rest));
        let (start, last) = slices.pop().expect("a block has a part");
        let at = last.len() - cols;
        let (rest, bottom) = last.split_at_mut(at);
        slices.push((start, rest));
        let parts = slices
            .into_iter()
            .filter(|(_, s)| !s.is_empty())
            .map(|(st, s)| (st, &*s))
            .collect();
        (top, bottom, Rows { cols, parts })
    }

    /// Row `k` (a storage row).
    fn row(&self, k: usize) -> &[f64] {
        let p = self
            .parts
            .iter()
            .find(|p| p.rows.contains(&k))
            .expect("a storage row of the block");
        let at = (k - p.rows.start) * self.cols;
        &p.buf[at..at + self.cols]
    }
}

/// Read access to some storage rows of a block, across its parts.
struct Rows<'a> {
    cols: usize,
    parts: Vec<(usize, &'a [f64])>,
}

impl Rows<'_> {
    fn get(&self, k: usize) -> Option<&[f64]> {
        self.parts.iter().find_map(|&(start, s)| {
            let i = k.checked_sub(start)?;
            (i < s.len() / self.cols).then(|| &s[i * self.cols..(i + 1) * self.cols])
        })
    }
}

/// Computes the storage rows in `ranges` of `dst` from `src`, each node's part on its
/// node's workers, split by `join` down to [`GRAIN_ROWS`]. `ranges` ascend; a row in two of
/// them (or before the end of an earlier one) is swept once.
fn sweep(pool: &ThreadPool, g: Geometry, src: &Rows<'_>, dst: &mut Block, ranges: &[Range<usize>]) {
    let cols = g.cols;
    pool.scope(|s| {
        for part in &mut dst.parts {
            let mut rest: &mut [f64] = &mut part.buf[..];
            let mut at = part.rows.start;
            for r in ranges {
                let lo = r.start.max(at);
                let hi = r.end.min(part.rows.end);
                if lo >= hi {
                    continue;
                }
                let tail = std::mem::take(&mut rest);
                let (_, tail) = tail.split_at_mut((lo - at) * cols);
                let (out, tail) = tail.split_at_mut((hi - lo) * cols);
                rest = tail;
                at = hi;
                s.spawn_on(part.node, move |_| sweep_rows(pool, g, src, out, lo));
            }
        }
    });
}

fn sweep_rows(pool: &ThreadPool, g: Geometry, src: &Rows<'_>, out: &mut [f64], first: usize) {
    let n = out.len() / g.cols;
    if n <= GRAIN_ROWS {
        for (i, row) in out.chunks_mut(g.cols).enumerate() {
            let k = first + i;
            let gi = g.lo + k - 1;
            let mid = src.get(k).expect("the row itself is readable");
            update_row(g.rows, gi, src.get(k - 1), mid, src.get(k + 1), row);
        }
    } else {
        let mid = n / 2;
        let (a, b) = out.split_at_mut(mid * g.cols);
        pool.join(
            || sweep_rows(pool, g, src, a, first),
            || sweep_rows(pool, g, src, b, first + mid),
        );
    }
}

/// The halo exchange (main thread only): the first owned row up, the last one down, the
/// neighbours' rows into the ghosts; non-blocking sends and receives, then their waits.
fn exchange(
    world: &SimpleCommunicator,
    rank: i32,
    size: i32,
    first: &[f64],
    last: &[f64],
    top: &mut [f64],
    bottom: &mut [f64],
) {
    zonal_mpi::mpi::request::scope(|sc| {
        let mut reqs = Vec::with_capacity(4);
        if rank > 0 {
            let up = world.process_at_rank(rank - 1);
            reqs.push(up.immediate_receive_into_with_tag(sc, top, TAG_DOWN));
            reqs.push(up.immediate_send_with_tag(sc, first, TAG_UP));
        }
        if rank + 1 < size {
            let down = world.process_at_rank(rank + 1);
            reqs.push(down.immediate_receive_into_with_tag(sc, bottom, TAG_UP));
            reqs.push(down.immediate_send_with_tag(sc, last, TAG_DOWN));
        }
        for r in reqs {
            r.wait_without_status();
        }
    });
}

/// Where a rank's time went.
#[derive(Default)]
struct Times {
    interior: Duration,
    boundary: Duration,
    comm: Duration,
    wait: Duration,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The CPUs the calling thread may run on, as the kernel says (`Cpus_allowed_list`).
fn thread_cpus() -> Result<Vec<u32>, String> {
    let status = std::fs::read_to_string("/proc/thread-self/status")
        .map_err(|e| format!("/proc/thread-self/status: {e}"))?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or("no Cpus_allowed_list in /proc/thread-self/status")?;
    zonal_topology::parse_cpulist(list.trim()).map_err(|e| e.to_string())
}

/// The NUMA nodes (OS ids) that `cpus` cover, ascending.
fn nodes_of(cpus: &[u32]) -> Result<Vec<u32>, String> {
    let m = zonal_topology::this_machine_unrestricted().map_err(|e| e.to_string())?;
    let mut nodes: Vec<u32> = m
        .cpus()
        .iter()
        .filter(|c| cpus.contains(&c.os_index))
        .map(|c| m.node(c.node).os_id)
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    Ok(nodes)
}

fn run(args: &Args) -> Result<ExitCode, String> {
    let mpi = zonal_mpi::init_funneled().map_err(|e| e.to_string())?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (r, s) = (
        usize::try_from(rank).map_err(|e| e.to_string())?,
        usize::try_from(size).map_err(|e| e.to_string())?,
    );
    if args.rows < s {
        if r == 0 {
            eprintln!("heat: --rows {} is fewer than the {s} ranks", args.rows);
        }
        return Ok(ExitCode::from(2));
    }

    // The process's CPUs, before the pool exists; then the pool, on this rank's share.
    let allowed = zonal_topology::allowed_cpus().map_err(|e| e.to_string())?;
    let nodes = nodes_of(&allowed)?;
    // `zonal_mpi::local_ranks(&world)` in one call; in two here, for the report.
    let node_ranks = zonal_mpi::node_ranks(&world).map_err(|e| e.to_string())?;
    let unbound = zonal_mpi::process_unbound().map_err(|e| e.to_string())?;
    let local = zonal_mpi::choose_local_ranks(node_ranks, unbound);
    let mut builder = ThreadPoolBuilder::new()
        .local_ranks(local)
        .policy_name(&args.policy);
    if let Some(n) = args.threads {
        builder = builder.num_threads(n);
    }
    if let Some(p) = &args.preset {
        builder = builder.preset(p);
    }
    let pool = builder
        .build()
        .map_err(|e| format!("building the pool: {e}"))?;
    let mut workers: Vec<u32> = Vec::new();
    for cpus in pool.broadcast(|_| thread_cpus()) {
        workers.extend(cpus?);
    }
    workers.sort_unstable();
    workers.dedup();

    // This rank's rows: [lo, lo + n) of the global grid.
    let lo = r * args.rows / s;
    let hi = (r + 1) * args.rows / s;
    let g = Geometry {
        rows: args.rows,
        cols: args.cols,
        lo,
        n: hi - lo,
    };
    let mut cur = Block::new(&pool, g)?;
    let mut next = Block::new(&pool, g)?;
    // Storage rows 2..n need no ghost row; rows 1 and n do.
    let interior = 2..g.n.max(2);
    // One row (n = 1): the same range twice, swept once (`sweep` skips rows it has done).
    let boundary = [1..2, g.n..g.n + 1];

    let mut times = Times::default();
    for _ in 0..args.steps {
        {
            let (top, bottom, owned) = cur.split_ghosts();
            let first = owned.get(1).expect("an owned row");
            let last = owned.get(g.n).expect("an owned row");
            let next_ref = &mut next;
            let pool_ref = &pool;
            let out = zonal_mpi::overlap(
                &pool,
                || {
                    sweep(
                        pool_ref,
                        g,
                        &owned,
                        next_ref,
                        std::slice::from_ref(&interior),
                    )
                },
                || exchange(&world, rank, size, first, last, top, bottom),
            )
            .map_err(|e| e.to_string())?;
            times.interior += out.compute_time;
            times.comm += out.comm_time;
            times.wait += out.wait_time;
        }
        let t = std::time::Instant::now();
        sweep(&pool, g, &cur.rows(), &mut next, &boundary);
        times.boundary += t.elapsed();
        std::mem::swap(&mut cur, &mut next);
    }

    // The report of this rank.
    let m = pool.metrics();
    let share = pool.local_share();
    let report = format!(
        "rank {r}/{s} on {host}\n\
         \x20 allowed CPUs {allowed}, NUMA nodes {nodes}\n\
         \x20 on this machine: MPI local rank {mr} of {mn}, {binding} by the launcher\n\
         \x20 local share: {share_line}\n\
         \x20 pool: {nw} workers on CPUs {wcpus}, policy {policy}, {levels} levels\n\
         \x20 steals by level: {steals:?}\n\
         \x20 time: compute {compute:.3} ms (interior {interior:.3} ms, boundary {bnd:.3} ms), \
         communication {comm:.3} ms, waiting for the pool {wait:.3} ms\n\
         heat: rank={r} size={s} allowed={allowed} nodes={nodes} workers={wcpus}",
        host = zonal_mpi::mpi::environment::processor_name().unwrap_or_default(),
        allowed = zonal_topology::format_cpulist(&allowed),
        nodes = zonal_topology::format_cpulist(&nodes),
        mr = node_ranks.rank,
        mn = node_ranks.size,
        binding = if unbound { "not bound" } else { "bound" },
        share_line = if share.split {
            format!(
                "rank {} of {} ({}) takes CPUs {}{}",
                share.local_rank,
                share.local_ranks,
                match share.source {
                    zonal_runtime::ShareSource::Explicit =>
                        "MPI's shared-memory communicator".to_owned(),
                    other => format!("{other:?}"),
                },
                zonal_topology::format_cpulist(&share.cpus),
                if share.oversubscribed {
                    ", oversubscribed: more ranks than CPUs"
                } else {
                    ""
                }
            )
        } else {
            "none, the pool uses every CPU the process is allowed".to_owned()
        },
        nw = pool.num_workers(),
        wcpus = zonal_topology::format_cpulist(&workers),
        policy = m.policy,
        levels = m.levels,
        steals = m.total.steals_by_level,
        compute = ms(times.interior + times.boundary),
        interior = ms(times.interior),
        bnd = ms(times.boundary),
        comm = ms(times.comm),
        wait = ms(times.wait),
    );
    let mine: Vec<f64> = (1..=g.n).flat_map(|k| cur.row(k).to_vec()).collect();

    let root = world.process_at_rank(0);
    let mut ok: u8 = 1;
    if r == 0 {
        let mut grid = mine;
        println!("{report}");
        for q in 1..size {
            let p = world.process_at_rank(q);
            let (block, _) = p.receive_vec_with_tag::<f64>(TAG_GRID);
            let (text, _) = p.receive_vec_with_tag::<u8>(TAG_REPORT);
            grid.extend(block);
            println!("{}", String::from_utf8_lossy(&text));
        }
        let serial = serial_run(args);
        let diff = if grid.len() == serial.len() {
            grid.iter()
                .zip(&serial)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f64, f64::max)
        } else {
            f64::INFINITY
        };
        let sum: f64 = grid.iter().sum();
        let serial_sum: f64 = serial.iter().sum();
        println!(
            "heat: {}x{} grid, {} steps, {s} ranks; checksum {sum:.6} (serial {serial_sum:.6})",
            args.rows, args.cols, args.steps
        );
        if diff <= 1e-9 {
            println!("heat: answer ok (max |diff| {diff:e} against the serial run)");
        } else {
            ok = 0;
            println!("heat: answer WRONG (max |diff| {diff:e} against the serial run)");
        }
    } else {
        root.send_with_tag(&mine[..], TAG_GRID);
        root.send_with_tag(report.as_bytes(), TAG_REPORT);
    }
    root.broadcast_into(&mut ok);
    drop(pool);
    drop(mpi);
    Ok(if ok == 1 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The whole grid, `--steps` sweeps on one thread, with the same kernel.
fn serial_run(args: &Args) -> Vec<f64> {
    let (rows, cols) = (args.rows, args.cols);
    let mut cur: Vec<f64> = (0..rows * cols)
        .map(|x| initial(x / cols, x % cols))
        .collect();
    let mut next = vec![0.0; rows * cols];
    for _ in 0..args.steps {
        for (i, out) in next.chunks_mut(cols).enumerate() {
            let row = |k: usize| &cur[k * cols..(k + 1) * cols];
            let up = i.checked_sub(1).map(row);
            let down = (i + 1 < rows).then(|| row(i + 1));
            update_row(rows, i, up, row(i), down, out);
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}
