//! The report of one policy's run ([`PolicyReport`]): its JSON line and its row of the
//! human comparison table ([`table`]).

use serde::Serialize;

use zonal_examples::service_load::TaskRecord;

/// Turnaround (spawn to completion) statistics, ms, from every task's own measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct TurnaroundMs {
    pub(crate) mean: f64,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
}

impl TurnaroundMs {
    /// Mean and nearest-rank quantiles of the records' turnarounds (zeros when empty).
    pub(crate) fn of(records: &[TaskRecord]) -> Self {
        let mut us: Vec<u64> = records.iter().map(|r| r.turnaround_us).collect();
        if us.is_empty() {
            return Self::default();
        }
        us.sort_unstable();
        let rank = |q: f64| {
            let i = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1;
            us[i] as f64 / 1e3
        };
        Self {
            mean: us.iter().sum::<u64>() as f64 / us.len() as f64 / 1e3,
            p50: rank(0.5),
            p99: rank(0.99),
            max: us[us.len() - 1] as f64 / 1e3,
        }
    }
}

/// One policy's run: what `--json` prints (one object a line) and the table shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct PolicyReport {
    pub(crate) policy: String,
    pub(crate) topology: String,
    /// A virtual pool (another machine's topology, one worker per virtual CPU).
    #[serde(rename = "virtual")]
    pub(crate) virtual_pool: bool,
    pub(crate) nodes: usize,
    pub(crate) workers: usize,
    /// The CPUs this process may use (a virtual pool may have more workers).
    pub(crate) cpus: usize,
    /// Memory access levels.
    pub(crate) levels: usize,
    /// Levels inside the load-balancing zone (index < zone_levels is inside).
    pub(crate) zone_levels: usize,
    pub(crate) seconds: u64,
    pub(crate) seed: u64,
    pub(crate) emulate_remote: bool,
    pub(crate) tasks_spawned: u64,
    /// Tasks that finished and recorded themselves (each exactly once, or the run fails).
    pub(crate) tasks_completed: u64,
    pub(crate) tasks_missing: u64,
    pub(crate) tasks_repeated: u64,
    /// Tasks per burst, and the nodes 70% of them are born on.
    pub(crate) tasks_per_burst: usize,
    pub(crate) hot_nodes: Vec<u32>,
    /// Bursts spawned, and those the plan had for the time (`seconds` / the burst period):
    /// fewer ran when the machine could not keep up.
    pub(crate) bursts: u64,
    pub(crate) bursts_due: u64,
    /// Bursts held back while too many tasks were live.
    pub(crate) bursts_delayed: u64,
    pub(crate) turnaround_ms: TurnaroundMs,
    /// Steals by level (index 0 = same node), from the pool's metrics.
    pub(crate) steals_by_level: Vec<u64>,
    pub(crate) control_plane_passes: u64,
    /// Tasks moved by the control plane's passes, by level (index 0 = same node).
    pub(crate) control_plane_migrations_by_level: Vec<u64>,
    /// Steals and control-plane moves beyond level I (to another node).
    pub(crate) migrations_beyond_node: u64,
    /// The policy's age limit (`None`: it never ages tasks).
    pub(crate) age_limit: Option<u32>,
    pub(crate) aged_tasks: u64,
    /// Node changes seen after a task aged (0 unless the runtime is wrong).
    pub(crate) moves_after_aged: u64,
    /// Worker changes seen after a task aged (node changes included).
    pub(crate) worker_moves_after_aged: u64,
    /// Migrations summed over the tasks (their final counts).
    pub(crate) task_migrations: u64,
    pub(crate) polls: u64,
    pub(crate) polls_away_from_home: u64,
    /// Wall time from the first burst until the last task finished.
    pub(crate) elapsed_s: f64,
}

impl PolicyReport {
    /// Fills the per-task fields from the records, and the sums of the by-level counts
    /// (set those first).
    pub(crate) fn add_records(&mut self, records: &[TaskRecord]) {
        self.tasks_completed = records.len() as u64;
        self.turnaround_ms = TurnaroundMs::of(records);
        let sum = |f: fn(&TaskRecord) -> u64| records.iter().map(f).sum::<u64>();
        self.aged_tasks = sum(|r| u64::from(r.aged));
        self.moves_after_aged = sum(|r| u64::from(r.moves_after_aged));
        self.worker_moves_after_aged = sum(|r| u64::from(r.worker_moves_after_aged));
        self.task_migrations = sum(|r| u64::from(r.migrations));
        self.polls = sum(|r| u64::from(r.polls));
        self.polls_away_from_home = sum(|r| u64::from(r.polls_away));
        let beyond = |v: &[u64]| v.iter().skip(1).sum::<u64>();
        self.migrations_beyond_node =
            beyond(&self.steals_by_level) + beyond(&self.control_plane_migrations_by_level);
    }

    /// What is wrong with the run, if anything: tasks lost or repeated, or aged tasks that
    /// moved under a policy that ages them.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if self.tasks_missing > 0 || self.tasks_repeated > 0 {
            p.push(format!(
                "{} of {} tasks never completed, {} completed more than once",
                self.tasks_missing, self.tasks_spawned, self.tasks_repeated
            ));
        }
        if self.tasks_completed != self.tasks_spawned {
            p.push(format!(
                "{} tasks completed of {} spawned",
                self.tasks_completed, self.tasks_spawned
            ));
        }
        if self.age_limit.is_some() && self.moves_after_aged + self.worker_moves_after_aged > 0 {
            p.push(format!(
                "aged tasks moved: {} node changes, {} worker changes after ageing",
                self.moves_after_aged, self.worker_moves_after_aged
            ));
        }
        p
    }
}

/// Roman numeral of level index `l` (0 = I, same node).
fn level(l: usize) -> String {
    zonal::topology::Level(l as u8).to_string()
}

/// Counts by level as `a/b/c`.
fn by_level(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
}

/// The human report: what ran, then one row per policy.
pub(crate) fn table(rows: &[PolicyReport]) -> String {
    let Some(first) = rows.first() else {
        return "no policy ran\n".to_owned();
    };
    let levels: Vec<String> = (0..first.levels).map(level).collect();
    let mut out = format!(
        "service load on {:?}{}: {} nodes, {} workers on {} CPUs, {} levels (zone I..{}), {} s of \
         arrivals per policy, seed {}\n",
        first.topology,
        if first.virtual_pool {
            " (virtual pool: one worker per virtual CPU)"
        } else {
            ""
        },
        first.nodes,
        first.workers,
        first.cpus,
        first.levels,
        level(first.zone_levels.saturating_sub(1)),
        first.seconds,
        first.seed,
    );
    out += &format!(
        "remote-access emulation: {}\n",
        if first.emulate_remote {
            "ON — a slice away from its state's node pays ceil(d/d_local) - 1 extra passes per \
             pass (labelled cost, not a measurement)"
        } else {
            "OFF (--emulate-remote charges a labelled cost for work away from its state)"
        }
    );
    out += &format!(
        "control plane: a balancing pass every {} ms; levels {} (I = same node)\n\n",
        zonal::runtime::BALANCE_TICK.as_millis(),
        levels.join("/")
    );
    let header = [
        "policy",
        "bursts/due",
        "held",
        "spawned",
        "completed",
        "mean ms",
        "p50 ms",
        "p99 ms",
        "steals by level",
        "cp passes",
        "cp migrations by level",
        "aged",
        "moves after aged",
    ];
    let cells: Vec<[String; 13]> = rows
        .iter()
        .map(|r| {
            [
                r.policy.clone(),
                format!("{}/{}", r.bursts, r.bursts_due),
                r.bursts_delayed.to_string(),
                r.tasks_spawned.to_string(),
                r.tasks_completed.to_string(),
                format!("{:.2}", r.turnaround_ms.mean),
                format!("{:.2}", r.turnaround_ms.p50),
                format!("{:.2}", r.turnaround_ms.p99),
                by_level(&r.steals_by_level),
                r.control_plane_passes.to_string(),
                by_level(&r.control_plane_migrations_by_level),
                match r.age_limit {
                    Some(_) => r.aged_tasks.to_string(),
                    None => "-".to_owned(),
                },
                match r.age_limit {
                    Some(_) => r.moves_after_aged.to_string(),
                    None => "-".to_owned(),
                },
            ]
        })
        .collect();
    let width: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |c: &[&str]| {
        let mut s = String::new();
        for (i, cell) in c.iter().enumerate() {
            if i == 0 {
                s += &format!("{cell:<w$}", w = width[i]);
            } else {
                s += &format!("  {cell:>w$}", w = width[i]);
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    out += &line(&header);
    out += &line(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    for c in &cells {
        out += &line(&c.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out += &format!(
        "\n(bursts of {} tasks every {} ms, 70% born on nodes {:?}; bursts/due: bursts spawned / \
         bursts the plan had for the time; held: bursts held back while more than {} tasks were \
         live; turnaround: spawn to completion of each task; aged / moves after aged: '-' for a \
         policy that never ages tasks)\n",
        first.tasks_per_burst,
        zonal_examples::service_load::BURST_EVERY.as_millis(),
        first.hot_nodes,
        zonal_examples::service_load::LIVE_PER_WORKER * first.workers as u64,
    );
    out
}

#[cfg(test)]
mod test {
    use super::*;

    fn record(id: u64, turnaround_us: u64) -> TaskRecord {
        TaskRecord {
            id,
            turnaround_us,
            polls: 4,
            polls_away: 1,
            migrations: 2,
            aged: id % 2 == 0,
            ..TaskRecord::default()
        }
    }

    fn report(policy: &str, age_limit: Option<u32>) -> PolicyReport {
        let records: Vec<TaskRecord> = (0..100).map(|i| record(i, (i + 1) * 1000)).collect();
        let mut r = PolicyReport {
            policy: policy.to_owned(),
            topology: "S1".to_owned(),
            virtual_pool: true,
            nodes: 16,
            workers: 32,
            cpus: 2,
            levels: 3,
            zone_levels: 2,
            seconds: 3,
            seed: 42,
            emulate_remote: true,
            tasks_spawned: 100,
            tasks_per_burst: 64,
            hot_nodes: vec![0, 1, 2, 3],
            bursts: 20,
            bursts_due: 150,
            bursts_delayed: 3,
            steals_by_level: vec![10, 5, 1],
            control_plane_passes: 700,
            control_plane_migrations_by_level: vec![3, 2, 0],
            age_limit,
            ..PolicyReport::default()
        };
        r.add_records(&records);
        r
    }

    #[test]
    fn turnaround_quantiles_are_nearest_rank() {
        let r = report("linux", None);
        // 1 ms … 100 ms, one each.
        assert_eq!(r.turnaround_ms.p50, 50.0);
        assert_eq!(r.turnaround_ms.p99, 99.0);
        assert_eq!(r.turnaround_ms.max, 100.0);
        assert!((r.turnaround_ms.mean - 50.5).abs() < 1e-9);
        assert_eq!(TurnaroundMs::of(&[]), TurnaroundMs::default());
    }

    #[test]
    fn records_add_up() {
        let r = report("conservative-hard", Some(3));
        assert_eq!(r.tasks_completed, 100);
        assert_eq!(r.aged_tasks, 50);
        assert_eq!((r.polls, r.polls_away_from_home), (400, 100));
        assert_eq!(r.task_migrations, 200);
        assert_eq!(r.migrations_beyond_node, 5 + 1 + 2);
        assert!(r.problems().is_empty(), "{:?}", r.problems());
    }

    #[test]
    fn lost_tasks_and_moved_aged_tasks_are_problems() {
        let mut r = report("conservative-hard", Some(3));
        r.moves_after_aged = 1;
        assert!(r.problems()[0].contains("aged tasks moved: 1 node changes"));
        // Without ageing the same count is no problem (it cannot be nonzero anyway).
        let mut r = report("linux", None);
        r.tasks_spawned = 101;
        r.tasks_missing = 1;
        let p = r.problems();
        assert!(p[0].contains("1 of 101 tasks never completed"), "{p:?}");
        assert!(p[1].contains("100 tasks completed of 101 spawned"), "{p:?}");
    }

    #[test]
    fn the_table_has_one_row_per_policy_and_labels_the_emulation() {
        let t = table(&[report("linux", None), report("conservative-hard", Some(3))]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("service load on \"S1\" (virtual pool"),
            "{t}"
        );
        assert!(
            lines[0].contains("16 nodes, 32 workers on 2 CPUs, 3 levels (zone I..II)"),
            "{t}"
        );
        assert!(lines[1].starts_with("remote-access emulation: ON"), "{t}");
        let header = lines
            .iter()
            .position(|l| l.starts_with("policy"))
            .expect("header");
        let linux = lines[header + 2];
        let cons = lines[header + 3];
        assert!(linux.starts_with("linux "), "{t}");
        let cells: Vec<&str> = linux.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "linux", "20/150", "3", "100", "100", "50.50", "50.00", "99.00", "10/5/1", "700",
                "3/2/0", "-", "-"
            ]
        );
        let cells: Vec<&str> = cons.split_whitespace().collect();
        assert_eq!(&cells[cells.len() - 2..], ["50", "0"]);
        let legend = lines.last().expect("legend");
        assert!(legend.contains("bursts of 64 tasks every 20 ms"), "{t}");
        assert!(legend.contains("nodes [0, 1, 2, 3]"), "{t}");
        assert!(legend.contains("more than 256 tasks were live"), "{t}");
        assert_eq!(table(&[]), "no policy ran\n");
    }

    #[test]
    fn the_json_line_has_the_documented_fields() {
        let v = serde_json::to_value(report("linux", None)).expect("serialises");
        for key in [
            "policy",
            "tasks_spawned",
            "tasks_completed",
            "zone_levels",
            "control_plane_passes",
            "control_plane_migrations_by_level",
            "steals_by_level",
            "aged_tasks",
            "moves_after_aged",
            "turnaround_ms",
            "emulate_remote",
            "seconds",
            "workers",
            "nodes",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["turnaround_ms"]["p50"], 50.0);
        assert_eq!(v["control_plane_migrations_by_level"][1], 2);
        assert_eq!(v["virtual"], true);
        assert_eq!(v["age_limit"], serde_json::Value::Null);
    }
}
