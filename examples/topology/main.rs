//! The topology report: the machine model, its NUMA levels and load-balancing zones.
//!
//! ```text
//! cargo run --release --example topology -- [--xml FILE | --nodes FILE.json | --sysfs ROOT | --preset NAME] --json
//! cargo run --release --example topology -- --fanout 4,4,4 [--cpus-per-node N]
//! cargo run --release --example topology -- --mesh 8x8 [--torus] [--cpus-per-node N]
//! ```
//!
//! Without an input flag it describes this machine through hwloc (the CPUs this process may
//! use). `--json` prints the [`TopologyReport`] (docs/DESIGN.md: `node_ids`, `levels`, `spans`,
//! `mal_count`, `zone_depth`, …); otherwise a human view: an lstopo-like tree, the levels
//! table and each node's zone. Warnings (an asymmetric matrix, assumed distances) go to
//! stderr. A bad input prints its typed error and exits with status 2.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgGroup, Parser};
use zonal_topology::TopologyReport;

mod render;
mod select;

use render::render_human;
use select::{MachineSource, DEFAULT_CPUS_PER_NODE};

/// Describe a machine's NUMA levels (as Linux's sched_init_numa builds them) and
/// load-balancing zones.
#[derive(Debug, Parser)]
#[command(name = "topology", version)]
#[command(group(ArgGroup::new("input").args(["xml", "nodes", "sysfs", "preset", "fanout", "mesh"])))]
#[command(group(ArgGroup::new("generator").args(["fanout", "mesh"])))]
struct Args {
    /// An hwloc XML export (`lstopo machine.xml`).
    #[arg(long, value_name = "FILE")]
    xml: Option<PathBuf>,
    /// A sysfs node dump: {"nodes": [{"id": 0, "cpus": [0, 1], "distance": [10, 20]}, ...]}.
    #[arg(long, value_name = "FILE.json")]
    nodes: Option<PathBuf>,
    /// A sysfs root: reads ROOT/sys/devices/system/node/node*/{cpulist,distance}.
    #[arg(long, value_name = "ROOT")]
    sysfs: Option<PathBuf>,
    /// One of the paper's machines: s1 (16 nodes x 2 CPUs), s2 (16 x 4), s3 (32 x 2).
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// A generated fan-out tree, innermost level first (4,4,4 = 64 nodes, 4 levels).
    #[arg(long, value_name = "F1,F2,...")]
    fanout: Option<String>,
    /// A generated 2-D mesh of WIDTHxHEIGHT nodes.
    #[arg(long, value_name = "WxH")]
    mesh: Option<String>,
    /// Close the mesh into a torus (wrap-around links).
    #[arg(long, requires = "mesh")]
    torus: bool,
    /// CPUs per node of a generated machine.
    #[arg(long, value_name = "N", requires = "generator")]
    cpus_per_node: Option<usize>,
    /// Print the machine model as JSON instead of the human view.
    #[arg(long)]
    json: bool,
}

impl Args {
    fn source(&self) -> zonal_topology::Result<MachineSource> {
        let cpus_per_node = self.cpus_per_node.unwrap_or(DEFAULT_CPUS_PER_NODE);
        Ok(if let Some(p) = &self.xml {
            MachineSource::Xml(p.clone())
        } else if let Some(p) = &self.nodes {
            MachineSource::Nodes(p.clone())
        } else if let Some(p) = &self.sysfs {
            MachineSource::Sysfs(p.clone())
        } else if let Some(name) = &self.preset {
            MachineSource::Preset(name.clone())
        } else if let Some(f) = &self.fanout {
            MachineSource::Fanout {
                fanout: MachineSource::parse_fanout(f)?,
                cpus_per_node,
            }
        } else if let Some(dims) = &self.mesh {
            let (width, height) = MachineSource::parse_mesh(dims)?;
            MachineSource::Mesh {
                width,
                height,
                torus: self.torus,
                cpus_per_node,
            }
        } else {
            MachineSource::ThisMachine
        })
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let topology = match args.source().and_then(|s| s.topology()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("topology: error: {e}");
            return ExitCode::from(2);
        }
    };
    let report = TopologyReport::new(&topology);
    for w in &report.warnings {
        eprintln!("topology: warning: {w}");
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.json {
        report.write_json(&mut out)
    } else {
        out.write_all(render_human(&topology).as_bytes())
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("topology: error: cannot write the report: {e}");
            ExitCode::from(1)
        }
    }
}
