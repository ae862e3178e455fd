//! Choosing a machine description from the `topology` example's input flags.
//!
//! | flag | source |
//! |---|---|
//! | (none) | this machine (sysfs on Linux), restricted to the CPUs this thread may use |
//! | `--hwloc` | this machine through hwloc, restricted alike |
//! | `--xml FILE` | an hwloc XML export |
//! | `--nodes FILE.json` | a sysfs node dump (docs/DESIGN.md) |
//! | `--sysfs ROOT` | `ROOT/sys/devices/system/node` |
//! | `--preset NAME` | the paper's `s1`, `s2`, `s3` |
//! | `--fanout 4,4,4 [--cpus-per-node N]` | a hierarchical fan-out |
//! | `--mesh 8x8 [--torus] [--cpus-per-node N]` | a 2-D mesh or torus |

use std::fmt;
use std::path::PathBuf;

use zonal_topology::{presets, Machine, Result, Topology, TopologyError};

/// CPUs per node of a generated machine when none is asked for.
pub(crate) const DEFAULT_CPUS_PER_NODE: usize = 1;

/// Where a machine description comes from.
///
/// ```text
/// use zonal_topology::MachineSource;
/// let src = MachineSource::Fanout { fanout: MachineSource::parse_fanout("4,4")?, cpus_per_node: 2 };
/// let t = src.topology()?;
/// assert_eq!((t.node_count(), t.cpu_count(), t.mal_count()), (16, 32, 3));
/// assert_eq!(src.to_string(), "--fanout 4,4 --cpus-per-node 2");
/// # Ok::<(), zonal_topology::TopologyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum MachineSource {
    /// This machine (sysfs on Linux), restricted to the CPUs this thread may use.
    ThisMachine,
    /// This machine through hwloc, restricted alike.
    ThisMachineHwloc,
    /// An hwloc XML export.
    Xml(PathBuf),
    /// A `--nodes` JSON dump.
    Nodes(PathBuf),
    /// A sysfs root directory.
    Sysfs(PathBuf),
    /// A named preset (`s1`, `s2`, `s3`).
    Preset(String),
    /// A hierarchical fan-out ([`presets::hierarchical`]).
    Fanout {
        /// Children per tree level, innermost first.
        fanout: Vec<usize>,
        /// CPUs per node.
        cpus_per_node: usize,
    },
    /// A 2-D mesh or torus ([`presets::mesh`]).
    Mesh {
        /// Nodes per row.
        width: usize,
        /// Rows.
        height: usize,
        /// Wrap-around links.
        torus: bool,
        /// CPUs per node.
        cpus_per_node: usize,
    },
}

impl MachineSource {
    /// Reads or generates the machine model.
    ///
    /// # Errors
    /// The typed error of the source: [`TopologyError::Io`] for a missing file,
    /// [`TopologyError::Hwloc`], [`TopologyError::Json`], [`TopologyError::Sysfs`],
    /// [`TopologyError::UnknownPreset`], [`TopologyError::InvalidGenerator`], and the
    /// validation errors of [`Machine::from_specs`].
    pub(crate) fn load(&self) -> Result<Machine> {
        match self {
            Self::ThisMachine => zonal_topology::this_machine(),
            Self::ThisMachineHwloc => zonal_topology::hwloc::this_machine(),
            Self::Xml(path) => zonal_topology::from_xml_file(path),
            Self::Nodes(path) => zonal_topology::from_nodes_file(path),
            Self::Sysfs(root) => zonal_topology::from_sysfs_root(root),
            Self::Preset(name) => presets::preset_machine(name),
            Self::Fanout {
                fanout,
                cpus_per_node,
            } => presets::hierarchical_machine(fanout, *cpus_per_node),
            Self::Mesh {
                width,
                height,
                torus,
                cpus_per_node,
            } => presets::mesh_machine(*width, *height, *torus, *cpus_per_node),
        }
    }

    /// Reads or generates the machine and builds its hierarchy.
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub(crate) fn topology(&self) -> Result<Topology> {
        self.load().map(Topology::new)
    }

    /// Parses a fan-out such as `4,4,4` (innermost level first).
    ///
    /// # Errors
    /// [`TopologyError::InvalidGenerator`] naming the bad part.
    ///
    /// ```text
    /// assert_eq!(zonal_topology::MachineSource::parse_fanout("4, 2")?, vec![4, 2]);
    /// assert!(zonal_topology::MachineSource::parse_fanout("4,,x").is_err());
    /// # Ok::<(), zonal_topology::TopologyError>(())
    /// ```
    pub(crate) fn parse_fanout(text: &str) -> Result<Vec<usize>> {
        text.split(',')
            .map(|part| {
                let part = part.trim();
                match part.parse::<usize>() {
                    Ok(f) if f > 0 => Ok(f),
                    _ => Err(TopologyError::InvalidGenerator(format!(
                        "fan-out {text:?}: {part:?} is not a positive integer \
                         (expected a list such as 4,4,4)"
                    ))),
                }
            })
            .collect()
    }

    /// Parses mesh dimensions such as `8x8` (width × height; `×` and `X` also work).
    ///
    /// # Errors
    /// [`TopologyError::InvalidGenerator`] naming the text.
    ///
    /// ```text
    /// assert_eq!(zonal_topology::MachineSource::parse_mesh("32x16")?, (32, 16));
    /// assert!(zonal_topology::MachineSource::parse_mesh("8").is_err());
    /// # Ok::<(), zonal_topology::TopologyError>(())
    /// ```
    pub(crate) fn parse_mesh(text: &str) -> Result<(usize, usize)> {
        let bad = || {
            TopologyError::InvalidGenerator(format!(
                "mesh {text:?}: expected WIDTHxHEIGHT such as 8x8"
            ))
        };
        let (w, h) = text.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
        let side = |s: &str| match s.trim().parse::<usize>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(bad()),
        };
        Ok((side(w)?, side(h)?))
    }
}

impl fmt::Display for MachineSource {
    /// The flags that select this source on the command line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ThisMachine => f.write_str("this machine"),
            Self::ThisMachineHwloc => f.write_str("--hwloc"),
            Self::Xml(p) => write!(f, "--xml {}", p.display()),
            Self::Nodes(p) => write!(f, "--nodes {}", p.display()),
            Self::Sysfs(p) => write!(f, "--sysfs {}", p.display()),
            Self::Preset(name) => write!(f, "--preset {name}"),
            Self::Fanout {
                fanout,
                cpus_per_node,
            } => {
                let list: Vec<String> = fanout.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "--fanout {} --cpus-per-node {cpus_per_node}",
                    list.join(",")
                )
            }
            Self::Mesh {
                width,
                height,
                torus,
                cpus_per_node,
            } => {
                write!(f, "--mesh {width}x{height}")?;
                if *torus {
                    f.write_str(" --torus")?;
                }
                write!(f, " --cpus-per-node {cpus_per_node}")
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn every_source_loads_or_fails_typed() {
        let s1 = MachineSource::Preset("s1".into()).topology().unwrap();
        assert_eq!(s1.mal_count(), 6);
        let mesh = MachineSource::Mesh {
            width: 4,
            height: 2,
            torus: true,
            cpus_per_node: 2,
        };
        assert_eq!(mesh.load().unwrap().cpus().len(), 16);
        assert_eq!(mesh.to_string(), "--mesh 4x2 --torus --cpus-per-node 2");
        let missing = std::env::temp_dir().join("zonal-select-missing.json");
        assert!(matches!(
            MachineSource::Nodes(missing.clone()).load(),
            Err(TopologyError::Io { .. })
        ));
        assert!(matches!(
            MachineSource::Sysfs(missing).load(),
            Err(TopologyError::Io { .. })
        ));
        assert!(matches!(
            MachineSource::Preset("s9".into()).load(),
            Err(TopologyError::UnknownPreset { .. })
        ));
        assert!(matches!(
            MachineSource::Fanout {
                fanout: vec![4],
                cpus_per_node: 0
            }
            .load(),
            Err(TopologyError::InvalidGenerator(_))
        ));
    }

    #[test]
    fn generator_shapes_parse() {
        assert_eq!(MachineSource::parse_fanout("4").unwrap(), vec![4]);
        assert!(MachineSource::parse_fanout("").is_err());
        assert!(MachineSource::parse_fanout("4,0").is_err());
        assert!(MachineSource::parse_fanout("-1").is_err());
        assert_eq!(MachineSource::parse_mesh(" 4X2 ").unwrap(), (4, 2));
        assert_eq!(MachineSource::parse_mesh("3×5").unwrap(), (3, 5));
        assert!(MachineSource::parse_mesh("0x4").is_err());
        assert!(MachineSource::parse_mesh("4x").is_err());
        assert!(MachineSource::parse_mesh("axb").is_err());
    }
}
