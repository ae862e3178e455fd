//! What the runtime examples (`workload`, `service`) share about the machine: which
//! topology the pool runs on (this machine, or a virtual pool over a preset, an hwloc XML
//! export or a node dump), `--policy NAME|all`, and the labelled remote-access emulation
//! (`--emulate-remote`).

use std::path::PathBuf;

use zonal::policy::{PolicyConfig, PolicyName};
use zonal::runtime::ThreadPoolBuilder;
use zonal::topology::{NodeId, Topology};

use crate::cli::{self, Exit};

/// Where the pool runs: this machine by default.
#[derive(clap::Args, Debug)]
pub struct MachineArgs {
    /// A named preset topology (s1, s2, s3, …): a virtual pool, one worker per virtual CPU.
    #[arg(long, conflicts_with_all = ["xml", "nodes"])]
    pub preset: Option<String>,
    /// Another machine's hwloc XML export (a virtual pool).
    #[arg(long, conflicts_with = "nodes")]
    pub xml: Option<PathBuf>,
    /// A node dump in the `--nodes` JSON format (a virtual pool).
    #[arg(long)]
    pub nodes: Option<PathBuf>,
}

impl MachineArgs {
    /// A builder for a pool on this machine or the chosen topology, under `policy`.
    pub fn builder(&self, policy: &str) -> ThreadPoolBuilder {
        let b = ThreadPoolBuilder::new().policy_name(policy);
        if let Some(p) = &self.preset {
            b.preset(p)
        } else if let Some(x) = &self.xml {
            b.xml_file(x)
        } else if let Some(n) = &self.nodes {
            b.nodes_file(n)
        } else {
            b
        }
    }
}

/// `--policy NAME|all`: every built-in policy for `all`, else the one named (an unknown
/// name is a usage error listing the valid ones).
///
/// # Errors
///
/// [`Exit::Usage`] for a name that is neither `all` nor a built-in policy.
pub fn policy_list(arg: &str) -> cli::Result<Vec<String>> {
    if arg == "all" {
        Ok(PolicyName::all().map(|p| p.as_str().to_owned()).collect())
    } else {
        PolicyConfig::named(arg).map_err(Exit::usage)?;
        Ok(vec![arg.to_owned()])
    }
}

/// The remote-access emulation (`--emulate-remote`, `on`): extra passes over its data that a
/// piece of work pays when it runs on `here` while its data lives on `home`,
/// `ceil(d(home, here) / d(home, home)) − 1` (0 at home, off, or off any worker).
pub fn remote_passes(topo: &Topology, home: NodeId, here: Option<NodeId>, on: bool) -> u32 {
    match here {
        Some(here) if on && here != home => {
            let (d, l) = (topo.distance(home, here), topo.distance(home, home).max(1));
            d.div_ceil(l).saturating_sub(1)
        }
        _ => 0,
    }
}
