//! The topology report: the machine model, its NUMA levels and load-balancing zones.
//!
//! ```text
//! cargo run --release --example topology -- [--hwloc | --xml FILE | --nodes FILE.json | --sysfs ROOT | --preset NAME] --json
//! cargo run --release --example topology -- --fanout 4,4,4 [--cpus-per-node N]
//! cargo run --release --example topology -- --mesh 8x8 [--torus] [--cpus-per-node N]
//! ```
//!
//! Without an input flag it describes this machine (the CPUs this thread may use) through
//! sysfs on Linux; `--hwloc` discovers it through hwloc instead (the same machine). `--json` prints the [`TopologyReport`] (docs/DESIGN.md: `node_ids`, `levels`, `spans`,
//! `mal_count`, `zone_depth`, …); otherwise a human view: an lstopo-like tree, the levels
//! table and each node's zone. Warnings (an asymmetric matrix, assumed distances) go to
//! stderr. A bad input prints its typed error and exits with status 2 (`examples/common/cli.rs`
//! lists every exit status).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgGroup, Parser};
use zonal_topology::TopologyReport;

// Shared by the three CLIs; this one has no mode-dependent flags (clap's `requires`
// covers them), so it leaves the mode checks unused.
use zonal_examples::cli;

mod render;
mod select;

use render::render_human;
use select::{MachineSource, DEFAULT_CPUS_PER_NODE};

/// Describe a machine's NUMA levels (as Linux's sched_init_numa builds them) and
/// load-balancing zones.
#[derive(Debug, Parser)]
#[command(name = "topology", version)]
#[command(group(ArgGroup::new("input").args(["hwloc", "xml", "nodes", "sysfs", "preset", "fanout", "mesh"])))]
#[command(group(ArgGroup::new("generator").args(["fanout", "mesh"])))]
struct Args {
    /// This machine through hwloc rather than sysfs (the same machine on Linux).
    #[arg(long)]
    hwloc: bool,
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
        Ok(if self.hwloc {
            MachineSource::ThisMachineHwloc
        } else if let Some(p) = &self.xml {
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
    cli::finish("topology", run(&Args::parse()))
}

fn run(args: &Args) -> cli::Result {
    if let Some(n) = args.cpus_per_node {
        cli::check_range("--cpus-per-node", n, 1, zonal_topology::MAX_CPUS)?;
    }
    let topology = args
        .source()
        .and_then(|s| s.topology())
        .map_err(cli::Exit::usage)?;
    let report = TopologyReport::new(&topology);
    for w in &report.warnings {
        eprintln!("topology: warning: {w}");
    }
    if args.json {
        let mut json = Vec::new();
        report.write_json(&mut json).map_err(cli::Exit::failure)?;
        cli::out(String::from_utf8_lossy(&json))
    } else {
        cli::out(render_human(&topology))
    }
}
