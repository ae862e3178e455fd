//! The NUMA kit: the machine, the runtimes, and each workload prepared on each runtime
//! ([`Kit::prepare`] → [`Prepared`]: data placed, then timed runs), shared by the criterion
//! bench `numa` and the `numa-report` program.
//!
//! Where threads and data go, per workload (`A` is the first node with allowed CPUs, `B` the node farthest
//! from it, `A` itself on one node):
//!
//! | workload | threads | data |
//! |---|---|---|
//! | `triad-all` | every node | each part where its runtime made it (Zonal: its home node, parts spread over the nodes) |
//! | `triad-node` | node `A` | made by those threads (Zonal: bound to `A`) |
//! | `triad-wrong-node` (the control) | node `A` | bound to `B` (a `NodeBuffer` for every runtime) |
//! | `stencil`, `chase` | every node | as `triad-all` |
//! | `service` | every node | each task's state on its home node (Zonal), or first touched by the task (tokio) |

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use zonal::runtime::{MemoryBinding, NodeBuffer, SpawnError, ThreadPool};
use zonal::topology::{Machine, NodeId};

use crate::numa::data::{
    chase_next, exchange_halos, stencil_init, triad_b, triad_c, ChasePart, Mem, StencilPart,
    TriadPart,
};
use crate::numa::engine::{Engine, EngineError, PartFn, ZONAL_POLICIES};
use crate::numa::host::Topo;
use crate::numa::locality::{kernel_pages, CpuNodes, KernelPages, SliceLog, SliceSummary};
use crate::numa::sizes::Sizes;

/// The workloads, in report order.
pub const WORKLOADS: [&str; 6] = [
    "triad-all",
    "triad-node",
    "triad-wrong-node",
    "stencil",
    "chase",
    "service",
];

/// The control: data deliberately on the wrong node.
pub const CONTROL: &str = "triad-wrong-node";
/// The control's local twin.
pub const CONTROL_TWIN: &str = "triad-node";

/// Why the kit cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    /// A runtime could not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Data could not be placed.
    #[error("cannot place a part: {0}")]
    Place(#[from] SpawnError),
    /// The machine could not be read.
    #[error("cannot read the machine: {0}")]
    Machine(#[from] zonal::topology::TopologyError),
    /// A workload name the kit does not know.
    #[error("unknown workload {0:?}")]
    Workload(String),
    /// The service load failed.
    #[error("{0}")]
    Service(String),
}

/// Threads and memory of one node, as the kit uses it.
#[derive(Clone, Debug, Serialize)]
pub struct Place {
    /// The node's OS id.
    pub os_id: u32,
    /// Its allowed CPUs.
    pub cpus: Vec<u32>,
    /// Its index in Zonal's pools.
    #[serde(skip)]
    pub node: NodeId,
}

/// The machine, the runtimes and the sizes.
#[derive(Debug)]
pub struct Kit {
    /// The topology from sysfs.
    pub topo: Topo,
    /// The sizes.
    pub sizes: Sizes,
    /// Node `A`: where the one-node workloads run.
    pub a: Place,
    /// Node `B`: the control's data (the farthest from `A`).
    pub b: Place,
    /// The nodes with allowed CPUs (Zonal's ids), where the spread workloads' parts live.
    pub homes: Vec<NodeId>,
    pub(crate) cpus: Arc<CpuNodes>,
    /// Zonal ×3, rayon, tokio on every CPU.
    engines: Vec<Engine>,
    /// rayon and tokio confined to node `A`.
    on_a: Vec<Engine>,
}

impl Kit {
    /// Reads the machine and starts every runtime.
    ///
    /// # Errors
    /// [`KitError`].
    pub fn new(topo: Topo, machine: &Machine, sizes: Sizes) -> Result<Self, KitError> {
        let mut engines = Vec::new();
        for p in ZONAL_POLICIES {
            engines.push(Engine::zonal(p)?);
        }
        engines.push(Engine::rayon(None)?);
        engines.push(Engine::tokio(None)?);
        let Engine::Zonal(_, pool) = &engines[0] else {
            unreachable!("the first engine is Zonal's")
        };
        let zmachine = pool.topology().machine().clone();
        let dense = |os: u32| zmachine.node_by_os_id(os).unwrap_or(NodeId(0));
        let with_cpus = topo.nodes_with_cpus();
        let first = with_cpus.first().map_or(0, |n| n.os_id);
        let a = Place {
            os_id: first,
            cpus: with_cpus
                .first()
                .map_or_else(Vec::new, |n| n.allowed_cpus.clone()),
            node: dense(first),
        };
        let far = topo
            .nodes
            .iter()
            .filter(|n| n.memory_bytes.is_some_and(|m| m > 0))
            .max_by_key(|n| (topo.distance(first, n.os_id).unwrap_or(0), n.os_id))
            .map_or(first, |n| n.os_id);
        let b = Place {
            os_id: far,
            cpus: topo
                .nodes
                .iter()
                .find(|n| n.os_id == far)
                .map_or_else(Vec::new, |n| n.allowed_cpus.clone()),
            node: dense(far),
        };
        let homes = with_cpus.iter().map(|n| dense(n.os_id)).collect();
        let on_a = vec![
            Engine::rayon(Some(a.cpus.clone()))?,
            Engine::tokio(Some(a.cpus.clone()))?,
        ];
        Ok(Self {
            cpus: Arc::new(CpuNodes::of(machine)),
            topo,
            sizes,
            a,
            b,
            homes,
            engines,
            on_a,
        })
    }

    /// The runtimes' names, in order.
    pub fn runtimes(&self) -> Vec<String> {
        self.engines.iter().map(Engine::name).collect()
    }

    /// Whether the machine shows no NUMA effect (one node with CPUs and memory).
    pub fn one_node(&self) -> bool {
        self.homes.len() < 2 && self.a.os_id == self.b.os_id
    }

    /// Runtime `r` on every CPU.
    pub(crate) fn engine_at(&self, r: usize) -> &Engine {
        &self.engines[r]
    }

    /// The Zonal pool that places the control's data (the first policy's).
    fn placer(&self) -> &ThreadPool {
        match &self.engines[0] {
            Engine::Zonal(_, pool) => pool,
            _ => unreachable!("the first engine is Zonal's"),
        }
    }

    /// Whether memory can be bound to a node here: `None` if a buffer on node `A` was
    /// bound, else why not (the binding that was taken instead).
    ///
    /// # Errors
    /// The buffer could not be made at all.
    pub fn probe_bind(&self) -> Result<Option<String>, KitError> {
        let buf = NodeBuffer::try_new_in(self.placer(), self.a.node, 4096, |i| i as u8)?;
        Ok(match buf.binding() {
            MemoryBinding::Bound | MemoryBinding::Preferred => None,
            MemoryBinding::FirstTouch(why) => Some(why.clone()),
            other => Some(format!("{other:?}")),
        })
    }

    /// The engine of runtime `r` for a workload whose threads stay on node `A` or not.
    fn engine(&self, r: usize, on_a: bool) -> &Engine {
        match (&self.engines[r], on_a) {
            (Engine::Rayon(_), true) => &self.on_a[0],
            (Engine::Tokio(_), true) => &self.on_a[1],
            (e, _) => e,
        }
    }

    /// `workload` prepared on runtime `r` (an index into [`runtimes`](Self::runtimes)):
    /// its data placed, nothing run yet. `Ok(None)` for the service load (not a part
    /// workload: [`Kit::service`]).
    ///
    /// # Errors
    /// [`KitError::Workload`] for an unknown name, [`KitError::Place`].
    pub fn prepare(&self, workload: &str, r: usize) -> Result<Option<Prepared<'_>>, KitError> {
        let s = &self.sizes;
        let nodes = self.homes.len().max(1);
        let on_a = matches!(workload, "triad-node" | "triad-wrong-node");
        let engine = self.engine(r, on_a);
        let (n_parts, homes): (usize, Vec<NodeId>) = if on_a {
            (s.parts_per_node, vec![self.a.node; s.parts_per_node])
        } else {
            let n = s.parts_per_node * nodes;
            (n, (0..n).map(|i| self.homes[i % nodes]).collect())
        };
        let bind_b = (workload == CONTROL).then_some(self.b.node);
        let data = match workload {
            "triad-all" | "triad-node" | "triad-wrong-node" => {
                let len = (s.bytes_per_node / 24 / s.parts_per_node).max(512);
                Data::Triad(self.make(engine, &homes, bind_b, n_parts, move |p, mem| {
                    let at = move |i: usize| p * len + i;
                    Ok(TriadPart {
                        a: mem.mem(len, |_| 0.0)?,
                        b: mem.mem(len, |i| triad_b(at(i)))?,
                        c: mem.mem(len, |i| triad_c(at(i)))?,
                    })
                })?)
            }
            "stencil" => {
                let cols = s.stencil_cols;
                let rows = (s.bytes_per_node / 16 / cols / s.parts_per_node).max(2);
                Data::Stencil(self.make(engine, &homes, None, n_parts, move |p, mem| {
                    Ok(StencilPart {
                        cur: mem
                            .mem(rows * cols, |i| stencil_init(p * rows + i / cols, i % cols))?,
                        next: mem.mem(rows * cols, |_| 0.0)?,
                        cols,
                        above: vec![0.0; cols],
                        below: vec![0.0; cols],
                    })
                })?)
            }
            "chase" => {
                let want = (s.bytes_per_node / 4 / s.parts_per_node).max(1024);
                // The largest power of two not above `want`.
                let len = 1usize << (usize::BITS - 1 - want.leading_zeros());
                Data::Chase(self.make(engine, &homes, None, n_parts, move |_, mem| {
                    Ok(ChasePart {
                        next: mem.mem(len, |i| chase_next(i, len))?,
                        pos: 0,
                    })
                })?)
            }
            "service" => return Ok(None),
            other => return Err(KitError::Workload(other.to_owned())),
        };
        Ok(Some(Prepared {
            workload: workload.to_owned(),
            runtime: engine.name(),
            engine,
            homes,
            data: Some(data),
            log: Arc::new(SliceLog::default()),
            cpus: Arc::clone(&self.cpus),
            steps: s.stencil_steps,
        }))
    }
}

/// Where a part's memory comes from while it is made.
#[derive(Clone, Copy, Debug)]
pub enum Alloc<'a> {
    /// A Zonal `NodeBuffer` on this node (filled by that node's workers).
    Node(&'a ThreadPool, NodeId),
    /// A `Vec`, written by the calling thread (a thread of the runtime that makes the part).
    Heap,
}

impl Alloc<'_> {
    /// `len` elements, element `i` being `init(i)`.
    ///
    /// # Errors
    /// The buffer could not be placed.
    pub fn mem<T: Send + Sync>(
        &self,
        len: usize,
        init: impl Fn(usize) -> T + Send + Sync,
    ) -> Result<Mem<T>, SpawnError> {
        match *self {
            Alloc::Node(pool, node) => NodeBuffer::try_new_in(pool, node, len, init).map(Mem::Node),
            Alloc::Heap => Ok(Mem::Heap((0..len).map(init).collect())),
        }
    }
}

/// How a part is made: its index, and where its memory comes from.
type MakeFn<P> = dyn Fn(usize, &Alloc<'_>) -> Result<P, SpawnError> + Send + Sync;

impl Kit {
    /// Makes `n` parts: on Zonal, or for the control on every runtime, as `NodeBuffer`s on
    /// their node (`bind`, else the part's home), made from here (each buffer is filled by
    /// its node's workers); on rayon and tokio otherwise as `Vec`s made on the runtime's
    /// threads.
    fn make<P: Send + 'static>(
        &self,
        engine: &Engine,
        homes: &[NodeId],
        bind: Option<NodeId>,
        n: usize,
        build: impl Fn(usize, &Alloc<'_>) -> Result<P, SpawnError> + Send + Sync + 'static,
    ) -> Result<Vec<P>, KitError> {
        let zonal = match engine {
            Engine::Zonal(_, pool) => Some(pool),
            _ => None,
        };
        if bind.is_some() || zonal.is_some() {
            let pool = zonal.unwrap_or_else(|| self.placer());
            return (0..n)
                .map(|i| Ok(build(i, &Alloc::Node(pool, bind.unwrap_or(homes[i])))?))
                .collect();
        }
        let build: Arc<MakeFn<P>> = Arc::new(build);
        engine
            .make_parts(n, homes, Arc::new(move |i| build(i, &Alloc::Heap)))
            .into_iter()
            .map(|r| r.map_err(KitError::from))
            .collect()
    }
}

/// A workload's data, in parts.
#[derive(Debug)]
enum Data {
    Triad(Vec<TriadPart>),
    Stencil(Vec<StencilPart>),
    Chase(Vec<ChasePart>),
}

/// One workload on one runtime, its data placed.
#[derive(Debug)]
pub struct Prepared<'k> {
    /// The workload.
    pub workload: String,
    /// The runtime.
    pub runtime: String,
    engine: &'k Engine,
    homes: Vec<NodeId>,
    data: Option<Data>,
    log: Arc<SliceLog>,
    cpus: Arc<CpuNodes>,
    steps: usize,
}

impl Prepared<'_> {
    /// One run of the workload (the triad: one pass; the stencil: its steps; the chase: each
    /// part walked over half its cycle), every slice recorded; its wall time.
    pub fn run_once(&mut self) -> Duration {
        let start = Instant::now();
        let (log, cpus) = (Arc::clone(&self.log), Arc::clone(&self.cpus));
        let data = self.data.take().expect("the data is back after every run");
        let e = self.engine;
        let homes = &self.homes;
        self.data = Some(match data {
            Data::Triad(parts) => {
                let f: PartFn<TriadPart> = Arc::new(move |_, p: &mut TriadPart| {
                    log.record(&cpus, &p.a);
                    p.run();
                });
                Data::Triad(e.for_each_part(parts, homes, &f))
            }
            Data::Stencil(mut parts) => {
                let f: PartFn<StencilPart> = Arc::new(move |_, p: &mut StencilPart| {
                    log.record(&cpus, &p.cur);
                    p.step();
                });
                for _ in 0..self.steps {
                    exchange_halos(&mut parts);
                    parts = e.for_each_part(parts, homes, &f);
                }
                Data::Stencil(parts)
            }
            Data::Chase(parts) => {
                let f: PartFn<ChasePart> = Arc::new(move |_, p: &mut ChasePart| {
                    log.record(&cpus, &p.next);
                    p.chase(p.steps());
                });
                Data::Chase(e.for_each_part(parts, homes, &f))
            }
        });
        start.elapsed()
    }

    /// The result, to compare across runtimes (exact: every runtime does the same
    /// arithmetic in the same order per part): the triad's and the heat grid's sums, the
    /// chase's end points.
    pub fn checksum(&self) -> String {
        match &self.data {
            Some(Data::Triad(p)) => format!("{:e}", p.iter().map(TriadPart::sum).sum::<f64>()),
            Some(Data::Stencil(p)) => {
                format!("{:e}", p.iter().map(StencilPart::sum).sum::<f64>())
            }
            Some(Data::Chase(p)) => p.iter().map(|c| u64::from(c.pos)).sum::<u64>().to_string(),
            None => String::new(),
        }
    }

    /// Where the kernel holds the data's pages now.
    pub fn kernel_pages(&self) -> KernelPages {
        match &self.data {
            Some(Data::Triad(p)) => {
                let all: Vec<&[f64]> = p.iter().flat_map(|t| [&*t.a, &*t.b, &*t.c]).collect();
                kernel_pages::<f64, _>(&all)
            }
            Some(Data::Stencil(p)) => {
                let all: Vec<&[f64]> = p.iter().flat_map(|t| [&*t.cur, &*t.next]).collect();
                kernel_pages::<f64, _>(&all)
            }
            Some(Data::Chase(p)) => {
                let all: Vec<&[u32]> = p.iter().map(|t| &*t.next).collect();
                kernel_pages::<u32, _>(&all)
            }
            None => KernelPages::default(),
        }
    }

    /// The slices recorded so far.
    pub fn slices(&self) -> SliceSummary {
        self.log.summary()
    }

    /// Bytes of data.
    pub fn bytes(&self) -> usize {
        match &self.data {
            Some(Data::Triad(p)) => p.iter().map(|t| 3 * 8 * t.a.len()).sum(),
            Some(Data::Stencil(p)) => p.iter().map(|t| 2 * 8 * t.cur.len()).sum(),
            Some(Data::Chase(p)) => p.iter().map(|t| 4 * t.next.len()).sum(),
            None => 0,
        }
    }
}
