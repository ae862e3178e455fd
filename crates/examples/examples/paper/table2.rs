//! The paper's Table 2 by its own measure: `crates/sim/reproduction/table2.json` and the
//! report's Table 2 section.
//!
//! # The measure
//!
//! The paper counts its 200 processes (S1, W2, Linux) by the level of the sched-domain
//! hierarchy, relative to the process's origin, on which the process ran *most*. Ours is
//! `zonal_sim::ran_most_level` per process, summed in `RunStats::exec_by_level`: the
//! level of the CPU's node relative to the process's origin node, weighted by the time the
//! process held a CPU there; ties go to the level nearest the origin; a process that never
//! ran is not counted (none does in a run that finishes). Shares are fractions of the
//! processes counted, pooled over seeds (`zonal_sim::share_by_level`).
//!
//! # The runs
//!
//! Point S1/W2/200, the paper's cost model, seeds `1..=seeds`, for each
//!
//! - topology: the preset `s1` and the variant `s1-alt` (zonal-topology's `presets`
//!   docs say what each assumes; the paper prints no distance matrices);
//! - Linux era: `2.6` (the paper's kernel) and `modern`;
//! - origin: at the parent (the paper's processes have their parent's node) and at the
//!   placement node;
//! - policy: `linux`, and `conservative-soft` / `conservative-hard` in both placement
//!   modes (`zone`, `paper`; `linux` has none).
//!
//! Beside them, the distance assignments tried for level VI ([`candidates`]), under 2.6
//! `linux` with origins at the parent. Every sentence of the section is generated from
//! these runs.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;
use zonal_policy::{ImbalanceRule, LinuxEra, PlacementMode, PolicyConfig};
use zonal_sim::experiment::{paper_workload, run_on, Job, System, WorkloadId};
use zonal_sim::{paper, share_by_level, CostPreset, OriginAt};
use zonal_topology::{presets, Level, NodeId, Topology};

/// Processes at Table 2's point.
pub(crate) const PROCS: usize = 200;
/// The report section's title.
pub(crate) const TITLE: &str = "Where processes run: Table 2 by the paper's measure";
/// The target: share of processes running most at levels V–VI under 2.6.
const TARGET_FAR: f64 = 0.15;
/// Levels on the paper's six-level machines.
const LEVELS: usize = 6;
/// The topologies of the main table: the preset and the variant.
const TOPOLOGIES: [&str; 2] = ["s1", "s1-alt"];

/// A distance assignment for a 16 × 2 machine: a name, what it assumes, the machine.
pub(crate) struct Candidate {
    pub(crate) name: &'static str,
    pub(crate) assumes: &'static str,
    pub(crate) topo: Topology,
}

/// One configuration's histogram, summed over seeds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Table2Row {
    pub(crate) topology: String,
    pub(crate) era: &'static str,
    pub(crate) origin_at: &'static str,
    /// `None` for `linux` (no placement mode).
    pub(crate) placement: Option<&'static str>,
    pub(crate) policy: String,
    /// The 2.6 era's imbalance rule (`kernel`, or `threshold` for the paper's reading).
    pub(crate) rule: &'static str,
    /// Processes by level run on most, summed over seeds.
    pub(crate) counts: Vec<u64>,
}

impl Table2Row {
    fn share(&self) -> Vec<f64> {
        share_by_level(&self.counts)
    }

    /// Share at the two farthest levels (V–VI).
    fn far(&self) -> f64 {
        far_of(&self.share())
    }

    fn label(&self) -> String {
        let policy = if self.rule == ImbalanceRule::Kernel.as_str() {
            self.policy.clone()
        } else {
            format!("{} ({} rule)", self.policy, self.rule)
        };
        match self.placement {
            Some(p) => format!("{policy} ({p})"),
            None => policy,
        }
    }
}

/// A tried distance assignment and its 2.6 `linux` histogram (origin at the parent).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CandidateRow {
    pub(crate) name: &'static str,
    pub(crate) assumes: &'static str,
    /// Nodes at each level from a node, mean over the nodes (level I = the node itself).
    pub(crate) nodes_by_level: Vec<f64>,
    pub(crate) counts: Vec<u64>,
}

/// Everything the section and the JSON show.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Table2 {
    pub(crate) seeds: u64,
    pub(crate) rows: Vec<Table2Row>,
    pub(crate) candidates: Vec<CandidateRow>,
}

fn far_of(share: &[f64]) -> f64 {
    share.iter().rev().take(2).sum()
}

/// The paper's Table 2 as fractions.
fn paper_share() -> Vec<f64> {
    share_by_level(&paper::TABLE2.map(u64::from))
}

/// Sum of absolute differences to the paper's shares over the six levels, in points.
fn l1_to_paper(share: &[f64]) -> f64 {
    share
        .iter()
        .zip(paper_share())
        .map(|(a, b)| 100.0 * (a - b).abs())
        .sum()
}

/// A variant system name (`s1-alt`): the paper's system whose workloads it runs, and its
/// topology; `None` for any other name.
pub(crate) fn variant_system(name: &str) -> Option<(System, Topology)> {
    let name = name.to_ascii_lowercase();
    if !presets::VARIANT_NAMES.contains(&name.as_str()) {
        return None;
    }
    let system = match name.split('-').next() {
        Some("s1") => System::S1,
        Some("s2") => System::S2,
        Some("s3") => System::S3,
        _ => return None,
    };
    presets::preset(&name).ok().map(|t| (system, t))
}

/// 16 nodes × 2 CPUs with distances `d(i, j)` off the diagonal.
fn machine16(name: &str, d: impl Fn(usize, usize) -> u64) -> Result<Topology, String> {
    presets::distance_rule(name, 16, 2, d)
        .map(Topology::new)
        .map_err(|e| format!("{name}: {e}"))
}

fn ring(a: usize, b: usize, n: usize) -> usize {
    let d = a.abs_diff(b);
    d.min(n - d)
}

/// The distance assignments tried for S1 (16 nodes × 2 CPUs, six levels 10 … 40 in steps of
/// 6): the preset, the variant, and four more built here (sim-only machines).
///
/// # Errors
/// A message if a machine is rejected.
pub(crate) fn candidates() -> Result<Vec<Candidate>, String> {
    let preset = |n: &str| presets::preset(n).map_err(|e| e.to_string());
    Ok(vec![
        Candidate {
            name: "s1",
            assumes: "the preset: 8 two-node boards on a ring, d = 16 + 6·(board hops)",
            topo: preset("s1")?,
        },
        Candidate {
            name: "s1, pairs i/i+8",
            assumes: "s1's distances with nodes numbered otherwise: node i's board partner \
                      is node i+8 (only the numbering, hence tie-breaking, differs)",
            topo: machine16("s1-pairs", |i, j| 16 + 6 * ring(i % 8, j % 8, 8) as u64)?,
        },
        Candidate {
            name: "boards on a line",
            assumes: "8 two-node boards on a line, d = 16 + 6·min(board hops, 4)",
            topo: machine16("boards-line", |i, j| {
                16 + 6 * (i / 2).abs_diff(j / 2).min(4) as u64
            })?,
        },
        Candidate {
            name: "two cabinets",
            assumes: "2 cabinets of 4 boards on a ring (16 + 6·hops inside); across cabinets \
                      34 to the same board position, 40 to the others",
            topo: machine16("two-cabinets", |i, j| {
                let (bi, bj) = (i / 2, j / 2);
                if bi / 4 == bj / 4 {
                    16 + 6 * ring(bi % 4, bj % 4, 4) as u64
                } else if bi % 4 == bj % 4 {
                    34
                } else {
                    40
                }
            })?,
        },
        Candidate {
            name: "nodes on a line",
            assumes: "16 nodes on a line, d = 10 + 6·min(hops, 5) (8-4-6's rule, 16 nodes)",
            topo: machine16("nodes-line", |i, j| 10 + 6 * i.abs_diff(j).min(5) as u64)?,
        },
        Candidate {
            name: "s1-alt",
            assumes: "the variant: 16 nodes on a ring, d = 10 + 6·min(hops, 5)",
            topo: preset("s1-alt")?,
        },
    ])
}

/// Nodes at each level from a node (level I = the node itself), averaged over every node
/// (the ring assumptions give every node the same counts; lines and cabinets do not).
fn nodes_by_level(t: &Topology) -> Vec<f64> {
    let n = t.node_count();
    let mut v = vec![0.0; t.mal_count()];
    for a in 0..n {
        for b in 0..n {
            if let Some(l) = t.node_level(NodeId(a as u32), NodeId(b as u32)) {
                if let Some(x) = v.get_mut(l.index()) {
                    *x += 1.0 / n as f64;
                }
            }
        }
    }
    v
}

/// One run of Table 2's point, with the paper's cost model of the policy's era (the 2.6
/// balancer's cost under 2.6, as the report's variants run it).
fn job(policy: PolicyConfig, seed: u64, origin_at: OriginAt) -> Job {
    let cost = CostPreset::Paper
        .model()
        .for_linux_era(policy.linux_era == LinuxEra::V2_6);
    Job {
        system: System::S1,
        label: "w2".into(),
        workload: paper_workload(System::S1, WorkloadId::W2, PROCS),
        policy,
        seed,
        cost,
        origin_at,
    }
}

/// Sums `exec_by_level` over seeds `1..=seeds`.
fn histogram(
    topo: &Topology,
    cfg: &PolicyConfig,
    origin_at: OriginAt,
    seeds: u64,
) -> Result<Vec<u64>, String> {
    let mut counts = vec![0u64; LEVELS];
    for seed in 1..=seeds {
        let r =
            run_on(topo, &job(cfg.clone(), seed, origin_at), false).map_err(|e| e.to_string())?;
        if r.stats.finished < r.stats.procs {
            return Err(format!(
                "Table 2: only {} of {} processes finished ({}, seed {seed})",
                r.stats.finished, r.stats.procs, cfg.name
            ));
        }
        for (c, &n) in counts.iter_mut().zip(&r.stats.exec_by_level) {
            *c += n;
        }
    }
    Ok(counts)
}

/// Runs Table 2's configurations. `cfg_of(policy, era)` gives the policy's config as the
/// rest of the report builds it; its placement mode is set here.
///
/// # Errors
/// A message if a machine or a policy is rejected, or a run does not finish.
pub(crate) fn run(
    seeds: u64,
    cfg_of: &dyn Fn(&str, LinuxEra) -> Result<PolicyConfig, String>,
) -> Result<Table2, String> {
    let mut rows = Vec::new();
    for topology in TOPOLOGIES {
        let topo = presets::preset(topology).map_err(|e| e.to_string())?;
        for (era_name, era) in [("2.6", LinuxEra::V2_6), ("modern", LinuxEra::Modern)] {
            // The paper's trace measure (origin = the first CPU queued on) first.
            for (origin_name, origin_at) in [
                ("placement", OriginAt::Placement),
                ("parent", OriginAt::Parent),
            ] {
                for policy in ["linux", "conservative-soft", "conservative-hard"] {
                    let modes: &[Option<PlacementMode>] = if policy == "linux" {
                        &[None]
                    } else {
                        &[Some(PlacementMode::Zone), Some(PlacementMode::Paper)]
                    };
                    for &mode in modes {
                        let mut cfg = cfg_of(policy, era)?;
                        if let Some(m) = mode {
                            cfg.placement = m;
                        }
                        rows.push(Table2Row {
                            topology: topology.to_string(),
                            era: era_name,
                            origin_at: origin_name,
                            placement: mode.map(PlacementMode::as_str),
                            policy: policy.to_string(),
                            rule: ImbalanceRule::Kernel.as_str(),
                            counts: histogram(&topo, &cfg, origin_at, seeds)?,
                        });
                    }
                }
            }
        }
        // The 2.6 baseline under the paper's threshold rule (the Table 1 section), origin at
        // the parent.
        let cfg = PolicyConfig {
            imbalance_rule: ImbalanceRule::Threshold,
            ..cfg_of("linux", LinuxEra::V2_6)?
        };
        rows.push(Table2Row {
            topology: topology.to_string(),
            era: "2.6",
            origin_at: "parent",
            placement: None,
            policy: "linux".to_string(),
            rule: ImbalanceRule::Threshold.as_str(),
            counts: histogram(&topo, &cfg, OriginAt::Parent, seeds)?,
        });
    }
    let linux = cfg_of("linux", LinuxEra::V2_6)?;
    let mut cands = Vec::new();
    for c in candidates()? {
        cands.push(CandidateRow {
            name: c.name,
            assumes: c.assumes,
            nodes_by_level: nodes_by_level(&c.topo),
            counts: histogram(&c.topo, &linux, OriginAt::Parent, seeds)?,
        });
    }
    Ok(Table2 {
        seeds,
        rows,
        candidates: cands,
    })
}

/// Rounded to 6 decimals, so that the JSON is short and stable.
fn r6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn r6v(v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| r6(x)).collect()
}

/// The JSON of `table2.json`.
pub(crate) fn json(t: &Table2) -> serde_json::Value {
    let paper = r6v(&paper_share());
    let rows: Vec<serde_json::Value> = t
        .rows
        .iter()
        .map(|r| {
            json!({
                "system": r.topology,
                "workload": "w2",
                "procs": PROCS,
                "era": r.era,
                "origin_at": r.origin_at,
                "placement": r.placement,
                "policy": r.policy,
                "imbalance_rule": r.rule,
                "processes": r.counts.iter().sum::<u64>(),
                "share_by_level": r6v(&r.share()),
                "far_share": r6(r.far()),
                "paper_share_by_level": paper,
                "paper_far_share": r6(far_of(&paper_share())),
            })
        })
        .collect();
    let candidates: Vec<serde_json::Value> = t
        .candidates
        .iter()
        .map(|c| {
            let share = share_by_level(&c.counts);
            json!({
                "name": c.name,
                "assumes": c.assumes,
                "mean_nodes_by_level": r6v(&c.nodes_by_level),
                "era": "2.6",
                "origin_at": "parent",
                "policy": "linux",
                "share_by_level": r6v(&share),
                "far_share": r6(far_of(&share)),
                "l1_to_paper_points": r6(l1_to_paper(&share)),
            })
        })
        .collect();
    json!({
        "point": { "system": "s1", "workload": "w2", "procs": PROCS },
        "cost": "paper",
        "seeds": t.seeds,
        "measure": "share of processes by the level (I..VI, relative to the process's origin \
                    node) on which it ran most: time holding a CPU, per level; ties to the \
                    level nearest the origin; processes that never ran not counted; pooled \
                    over seeds",
        "levels": (0..LEVELS).map(|l| Level(l as u8).to_string()).collect::<Vec<_>>(),
        "paper_share_by_level": paper,
        "rows": rows,
        "candidates": candidates,
    })
}

/// Writes `dir/reproduction/table2.json`.
///
/// # Errors
/// A message naming the file that could not be written.
pub(crate) fn write_json(dir: &Path, t: &Table2) -> Result<(), String> {
    let fig_dir = dir.join("reproduction");
    std::fs::create_dir_all(&fig_dir)
        .map_err(|e| format!("cannot create {}: {e}", fig_dir.display()))?;
    let path = fig_dir.join("table2.json");
    let text = serde_json::to_string_pretty(&json(t)).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A mean node count: whole numbers without decimals.
fn nodes(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round())
    } else {
        format!("{x:.2}")
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn cells(share: &[f64]) -> String {
    share
        .iter()
        .map(|&x| pct(x))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn find<'a>(
    t: &'a Table2,
    topology: &str,
    era: &str,
    origin_at: &str,
    policy: &str,
    placement: Option<&str>,
) -> Option<&'a Table2Row> {
    t.rows.iter().find(|r| {
        r.topology == topology
            && r.era == era
            && r.origin_at == origin_at
            && r.policy == policy
            && r.placement == placement
    })
}

/// The report's section (without its `##` title, [`TITLE`]): the definition, the tables and
/// sentences generated from `t`.
pub(crate) fn markdown(t: &Table2) -> String {
    let paper = paper_share();
    let mut md = format!(
        "The paper's Table 2 counts its {PROCS} S1/W2 processes under Linux by the level, \
         relative to the process's origin, on which each ran *most*. Ours is the same \
         count (`zonal_sim::ran_most_level`): the level of the CPU's node relative to the \
         origin node, weighted by the time the process held a CPU there; ties go to the \
         level nearest the origin; a process that never ran is not counted. Shares are of \
         the processes counted, pooled over seeds 1–{}, the paper's cost model. `s1` is \
         the preset; `s1-alt` is a variant with other distances (zonal-topology's \
         `presets`: 16 nodes on a ring, `d = 10 + 6·min(hops, 5)`), since the paper prints \
         no distance matrices. Placement mode in brackets (`zone`: fork placement and \
         new-idle balancing kept in the zone too; `paper`: only the periodic balancer \
         restricted). JSON: `reproduction/table2.json`.\n\n",
        t.seeds
    );
    for era in ["2.6", "modern"] {
        let _ = write!(
            md,
            "## Linux era {era}\n\n\
             | topology | origin | policy | I | II | III | IV | V | VI | V–VI |\n\
             |---|---|---|---|---|---|---|---|---|---|\n\
             | paper (S1) | its traces | Linux | {} | {} |\n",
            cells(&paper),
            pct(far_of(&paper))
        );
        for r in t.rows.iter().filter(|r| r.era == era) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                if r.topology == "s1" {
                    r.topology.clone()
                } else {
                    format!("{} (extension)", r.topology)
                },
                if r.origin_at == "placement" {
                    "first CPU queued on (the paper's trace)"
                } else {
                    "parent (extension)"
                },
                r.label(),
                cells(&r.share()),
                pct(r.far())
            );
        }
        md.push('\n');
    }
    md.push_str(&sentences(t));
    md.push_str(&candidates_md(t));
    md
}

/// The generated sentences under the tables: the paper's trace measure on the preset
/// first (the verdict's), then the extensions.
fn sentences(t: &Table2) -> String {
    let paper = paper_share();
    let mut md = String::new();
    if let (Some(old), Some(new)) = (
        find(t, "s1", "2.6", "placement", "linux", None),
        find(t, "s1", "modern", "placement", "linux", None),
    ) {
        let _ = writeln!(
            md,
            "- **The paper's trace measure on the preset** (`s1`, origin = the first CPU a \
             process was queued on, i.e. its placement node): 2.6 `linux` runs {} of \
             processes most at levels V–VI ({} at level I), modern `linux` {}; the paper {} \
             (level I {}). This is what the verdict judges.",
            pct(old.far()),
            pct(old.share()[0]),
            pct(new.far()),
            pct(far_of(&paper)),
            pct(paper[0]),
        );
    }
    md.push_str(
        "- *Extensions* (not the paper's measure or not its machine): origin at the parent's \
         node, and the `s1-alt` distances, picked for Table 2 from the six candidates below by \
         closeness to the paper.\n",
    );
    let mut met_on = Vec::new();
    for topology in TOPOLOGIES {
        let (Some(old), Some(new)) = (
            find(t, topology, "2.6", "parent", "linux", None),
            find(t, topology, "modern", "parent", "linux", None),
        ) else {
            continue;
        };
        let (s, far) = (old.share(), old.far());
        if far >= TARGET_FAR {
            met_on.push(format!("`{topology}`"));
        }
        let _ = writeln!(
            md,
            "  - `{topology}`, origin at the parent: 2.6 `linux` runs {} of processes most at \
             levels V–VI (VI alone {}), modern `linux` {}; the paper {} (VI {}).",
            pct(far),
            pct(s[LEVELS - 1]),
            pct(new.far()),
            pct(far_of(&paper)),
            pct(paper[LEVELS - 1]),
        );
        for policy in ["conservative-soft", "conservative-hard"] {
            let (Some(z), Some(p)) = (
                find(t, topology, "2.6", "parent", policy, Some("zone")),
                find(t, topology, "2.6", "parent", policy, Some("paper")),
            ) else {
                continue;
            };
            let _ = writeln!(
                md,
                "    - 2.6 `{policy}`: {} at V–VI with placement `paper`, {} with placement \
                 `zone` (extension).",
                pct(p.far()),
                pct(z.far()),
            );
        }
        if topology != "s1" {
            if let Some(pl) = find(t, topology, "2.6", "placement", "linux", None) {
                let _ = writeln!(
                    md,
                    "    - By the trace measure on `{topology}`, 2.6 `linux` has {} at V–VI \
                     ({} at level I).",
                    pct(pl.far()),
                    pct(pl.share()[0]),
                );
            }
        }
    }
    let _ = write!(
        md,
        "\nThe earlier target (at least {} of processes at V–VI under 2.6, origin at the \
         parent — an extension's measure) is met on {}; by the paper's trace measure on the \
         preset, the verdict above applies.\n\n",
        pct(TARGET_FAR),
        if met_on.is_empty() {
            "none of the topologies shown".to_string()
        } else {
            met_on.join(" and ")
        }
    );
    md
}

/// The candidates' table and which comes nearest the paper.
fn candidates_md(t: &Table2) -> String {
    let paper = paper_share();
    let mut md = String::from(
        "## Distance assumptions tried for level VI\n\n\
         2.6 `linux`, origin at the parent, on 16 nodes × 2 CPUs with six levels (10, 16, \
         22, 28, 34, 40) under each assumption. *Nodes* = nodes at levels I–VI from a node, mean over the nodes; \
         *L1* = sum over the six levels of the absolute difference to the paper's shares, \
         in points.\n\n\
         | assumption | what it assumes | nodes | I | II | III | IV | V | VI | V–VI | L1 |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let _ = writeln!(
        md,
        "| paper (S1) | not printed | — | {} | {} | 0.0 |",
        cells(&paper),
        pct(far_of(&paper))
    );
    for c in &t.candidates {
        let s = share_by_level(&c.counts);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1} |",
            c.name,
            c.assumes,
            c.nodes_by_level
                .iter()
                .map(|&x| nodes(x))
                .collect::<Vec<_>>()
                .join("/"),
            cells(&s),
            pct(far_of(&s)),
            l1_to_paper(&s)
        );
    }
    let nearest = t.candidates.iter().min_by(|a, b| {
        l1_to_paper(&share_by_level(&a.counts)).total_cmp(&l1_to_paper(&share_by_level(&b.counts)))
    });
    let vi = |c: &CandidateRow| share_by_level(&c.counts)[LEVELS - 1];
    let nearest_vi = t.candidates.iter().min_by(|a, b| {
        (vi(a) - paper[LEVELS - 1])
            .abs()
            .total_cmp(&(vi(b) - paper[LEVELS - 1]).abs())
    });
    if let (Some(n), Some(v)) = (nearest, nearest_vi) {
        let _ = write!(
            md,
            "\nNearest the paper's whole distribution: `{}` (L1 {:.1} points). Nearest its \
             level VI ({}): `{}` ({} at VI). Mean nodes at level VI and the share of \
             processes there: ",
            n.name,
            l1_to_paper(&share_by_level(&n.counts)),
            pct(paper[LEVELS - 1]),
            v.name,
            pct(vi(v)),
        );
        let parts: Vec<String> = t
            .candidates
            .iter()
            .map(|c| {
                format!(
                    "`{}` {} → {}",
                    c.name,
                    nodes(c.nodes_by_level[LEVELS - 1]),
                    pct(vi(c))
                )
            })
            .collect();
        let _ = writeln!(md, "{}.", parts.join(", "));
    }
    md
}

#[cfg(test)]
mod test {
    use super::*;

    fn cfg(policy: &str, era: LinuxEra) -> Result<PolicyConfig, String> {
        let mut c = PolicyConfig::named(policy).map_err(|e| e.to_string())?;
        c.linux_era = era;
        Ok(c)
    }

    #[test]
    fn table2_json_is_deterministic_and_complete_for_a_small_run() {
        let a = run(1, &cfg).unwrap();
        let b = run(1, &cfg).unwrap();
        assert_eq!(a, b);
        let (ja, jb) = (json(&a), json(&b));
        assert_eq!(
            serde_json::to_string_pretty(&ja).unwrap(),
            serde_json::to_string_pretty(&jb).unwrap()
        );
        // 2 topologies × (2 eras × 2 origins × (linux + 2 policies × 2 placement modes)
        // + 2.6 linux under the threshold rule).
        let rows = ja["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 42);
        let threshold = rows.iter().filter(|r| r["imbalance_rule"] == "threshold");
        assert_eq!(threshold.count(), 2);
        for r in rows {
            assert_eq!(r["processes"], PROCS as u64);
            let share: Vec<f64> = r["share_by_level"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(share.len(), 6);
            assert!((share.iter().sum::<f64>() - 1.0).abs() < 1e-5);
            assert_eq!(r["paper_share_by_level"][5], 0.135);
        }
        assert_eq!(ja["candidates"].as_array().unwrap().len(), 6);
        // The hard zone never runs a process beyond level IV with its zone placement.
        let hard = find(&a, "s1", "2.6", "parent", "conservative-hard", Some("zone")).unwrap();
        assert_eq!(hard.far(), 0.0);
        let md = markdown(&a);
        assert!(md.contains("| paper (S1) | its traces | Linux | 43.5% | 13.5% |"));
        assert!(md.contains("The earlier target (at least 15.0% of processes at V–VI"));
        // The trace measure on the preset leads.
        let trace = md
            .find("**The paper's trace measure on the preset**")
            .unwrap();
        assert!(trace < md.find("*Extensions*").unwrap());
    }

    #[test]
    fn a_variant_system_runs_its_paper_systems_workloads() {
        let (s, t) = variant_system("s1-alt").unwrap();
        assert_eq!(s, System::S1);
        assert_eq!((t.node_count(), t.cpu_count()), (16, 32));
        assert!(variant_system("s1").is_none());
        assert!(variant_system("s9-alt").is_none());
    }

    #[test]
    fn the_paper_shares_are_table_2s() {
        let p = paper_share();
        assert!((far_of(&p) - 0.21).abs() < 1e-12);
        assert!(l1_to_paper(&p).abs() < 1e-9);
    }
}
