//! The exposition: a [`PoolMetrics`] snapshot as Prometheus series, encoded by the
//! `prometheus-client` crate in the OpenMetrics text format (which Prometheus scrapes
//! natively, and prefers).
//!
//! The series are defined once (`series`), and reach an encoder through a `prometheus-client`
//! [`Collector`]: [`PoolCollector`]. The built-in endpoint registers one holding a fresh
//! snapshot in a fresh registry at every scrape ([`encode_metrics`]); a user registers one
//! holding the pool's [`MetricsHandle`] in a registry of their own, and it takes a fresh
//! snapshot at each encoding. Either way the exposition holds no state between scrapes
//! and never drifts from [`ThreadPool::metrics`](crate::ThreadPool::metrics).
//!
//! Series (counters carry OpenMetrics' `_total` suffix):
//!
//! | series | labels | from |
//! |---|---|---|
//! | `zonal_steals_total` | `level` | `total.steals_by_level` |
//! | `zonal_refusals_total` | `reason` | `total.refused` ([`Refusal::as_str`](zonal_policy::Refusal::as_str)) |
//! | `zonal_migrations_total` | `level`, `source` = `steal` \| `balance` | `total.steals_by_level`, `total.balance_migrations_by_level` |
//! | `zonal_queue_length` (gauge) | `worker`, `node` | `workers[w].queue_len` |
//! | `zonal_task_turnaround_seconds` (histogram) | `le` | `turnaround` |
//! | `zonal_tasks_run_total` | | `total.tasks_run` |
//! | `zonal_tasks_spawned_total` | | `tasks_spawned()` (workers' and injected) |
//! | `zonal_task_panics_total` | | `total.panics` |
//! | `zonal_idle_seconds_total` | | `total.idle_ns` |
//! | `zonal_job_memory_bytes` (gauge) | | `total.job_memory_bytes` |
//! | `zonal_workers` (gauge) | | `workers.len()` |
//! | `zonal_workers_pinned` (gauge) | | `workers[w].pinned` (count) |
//! | `zonal_workers_displaced` (gauge) | | `displaced_workers` |
//! | `zonal_displacements_total` | | `total.displacements` |
//! | `zonal_repins_total` | | `total.repins` |
//! | `zonal_pin_fallback_workers` (gauge) | | `pin_fallback_workers` |
//! | `zonal_topology_discovered` (gauge, 0 or 1) | | `topology_discovered` |
//! | `zonal_policy_info` | `policy`, `levels`, `zone_depth` | the pool's policy and topology |
//!
//! Levels are labelled by the paper's roman numerals: `level="I"` is index 0 of the
//! `*_by_level` vectors (the same node), `"II"` index 1, and so on.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::{Registry, Unit};
use zonal_topology::Level;

use crate::handle::MetricsHandle;
use crate::metrics::PoolMetrics;

impl MetricsHandle {
    /// A fresh snapshot's exposition in the OpenMetrics text format (feature
    /// `control-plane`): what [`ControlPlane::serve_metrics`](crate::ControlPlane::serve_metrics)
    /// answers a scrape with, to serve from a handler of your own (hyper, axum, ...) with the
    /// content type [`METRICS_CONTENT_TYPE`](crate::METRICS_CONTENT_TYPE). See
    /// [`encode_metrics`](crate::encode_metrics) for a snapshot already taken, and
    /// [`PoolCollector`](crate::PoolCollector) to add the series to a registry of your own.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let handle = pool.metrics_handle();
    /// // e.g. in an axum route: `get(move || async move { handle.encode().unwrap_or_default() })`
    /// let body = handle.encode()?;
    /// assert!(body.contains("zonal_steals_total{level=\"I\"}"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A formatting error of the encoder (writing to a `String` does not fail).
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        encode_snapshot(self.snapshot())
    }
}
use crate::turnaround::Turnaround;

/// The content type of the exposition ([`encode_metrics`], and a registry's text encoding
/// by `prometheus_client::encoding::text::encode`): OpenMetrics text, version 1.0.0.
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The label set of the families: (name, value) pairs.
type Labels = Vec<(&'static str, String)>;

/// The label value of a level index: its roman numeral (0 → `I`), as `Level` displays it.
pub(crate) fn level_label(index: usize) -> String {
    u8::try_from(index).map_or_else(|_| format!("{}", index + 1), |i| Level(i).to_string())
}

/// A family of series in a fixed order (by level, by worker), unlike
/// `prometheus_client`'s `Family` (a hash map): one series per `(labels, metric)`.
#[derive(Debug)]
struct Ordered<M>(Vec<(Labels, M)>);

impl<M: EncodeMetric + TypedMetric> EncodeMetric for Ordered<M> {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        for (labels, m) in &self.0 {
            m.encode(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        M::TYPE
    }
}

/// A counter family with one series per `(labels, value)`, in that order.
fn counters(series: impl IntoIterator<Item = (Labels, u64)>) -> Ordered<ConstCounter<u64>> {
    Ordered(
        series
            .into_iter()
            .map(|(l, v)| (l, ConstCounter::new(v)))
            .collect(),
    )
}

/// A counter of one value.
fn counter(v: u64) -> Counter {
    let c = Counter::default();
    c.inc_by(v);
    c
}

/// A gauge of one value (saturating at `i64::MAX`).
fn gauge(v: u64) -> Gauge {
    let g = Gauge::default();
    g.set(i64::try_from(v).unwrap_or(i64::MAX));
    g
}

/// The turnaround snapshot as an OpenMetrics histogram, in seconds.
#[derive(Debug)]
struct TurnaroundMetric(Turnaround);

impl EncodeMetric for TurnaroundMetric {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        let t = &self.0;
        // prometheus-client takes per-bucket counts and marks `+Inf` by `f64::MAX`.
        let mut buckets: Vec<(f64, u64)> = t
            .upper_bounds_ns
            .iter()
            .zip(&t.counts)
            .map(|(&b, &c)| (b as f64 / 1e9, c))
            .collect();
        let above = t.counts.get(t.upper_bounds_ns.len()).copied().unwrap_or(0);
        buckets.push((f64::MAX, above));
        encoder.encode_histogram::<NoLabelSet>(t.sum_seconds(), t.count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// What each series is handed to, in order: its name, help, unit and metric.
type Emit<'e> = dyn FnMut(&str, &str, Option<&Unit>, &dyn EncodeMetric) -> fmt::Result + 'e;

/// The one definition of the series: emits every series of the snapshot `m`, in order.
/// The built-in endpoint ([`encode_metrics`]) and a user's registry ([`PoolCollector`])
/// both encode through it. Help texts end with a period, as `Registry::register` writes
/// them.
fn series(m: &PoolMetrics, emit: &mut Emit<'_>) -> fmt::Result {
    emit(
        "zonal_steals",
        "Tasks stolen, by the level of the victim (I = same node).",
        None,
        &counters(
            m.total
                .steals_by_level
                .iter()
                .enumerate()
                .map(|(i, &n)| (vec![("level", level_label(i))], n)),
        ),
    )?;
    emit(
        "zonal_refusals",
        "Steal attempts the policy refused, by reason.",
        None,
        &counters(
            m.total
                .refused
                .by_name()
                .into_iter()
                .map(|(reason, n)| (vec![("reason", reason.to_owned())], n)),
        ),
    )?;
    let (steals, balanced) = (
        &m.total.steals_by_level,
        &m.total.balance_migrations_by_level,
    );
    let migrations = (0..steals.len().max(balanced.len())).flat_map(|i| {
        [("steal", steals.get(i)), ("balance", balanced.get(i))]
            .into_iter()
            .filter_map(move |(source, n)| {
                let labels = vec![("level", level_label(i)), ("source", source.to_owned())];
                n.map(|&n| (labels, n))
            })
    });
    emit(
        "zonal_migrations",
        "Tasks moved between workers, by level (I = same node) and by who moved them: a \
         thief (steal) or the control plane's balancer (balance).",
        None,
        &counters(migrations),
    )?;
    let queues = Ordered(
        m.workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                // Per worker: `worker` and `node` are always set (`None` only in a total).
                let labels = vec![
                    ("worker", w.worker.unwrap_or(i).to_string()),
                    ("node", w.node.map_or_else(String::new, |n| n.to_string())),
                ];
                let len = ConstGauge::new(i64::try_from(w.queue_len).unwrap_or(i64::MAX));
                (labels, len)
            })
            .collect(),
    );
    emit(
        "zonal_queue_length",
        "Tasks waiting in a worker's queues (deque, inbox, away queue) at the scrape.",
        None,
        &queues,
    )?;
    emit(
        "zonal_task_turnaround",
        "Task turnaround, queued to completed, of the tasks that record it (async tasks, \
         spawned tasks with a handle).",
        Some(&Unit::Seconds),
        &TurnaroundMetric(m.turnaround.clone()),
    )?;
    emit(
        "zonal_tasks_run",
        "Tasks run by the workers.",
        None,
        &counter(m.total.tasks_run),
    )?;
    emit(
        "zonal_tasks_spawned",
        "Tasks queued, by workers and from outside the pool.",
        None,
        &counter(m.tasks_spawned()),
    )?;
    emit(
        "zonal_task_panics",
        "Spawned tasks that panicked.",
        None,
        &counter(m.total.panics),
    )?;
    let idle = Counter::<f64, std::sync::atomic::AtomicU64>::default();
    idle.inc_by(m.total.idle_ns as f64 / 1e9);
    emit(
        "zonal_idle",
        "Time the workers spent searching for work or parked.",
        Some(&Unit::Seconds),
        &idle,
    )?;
    emit(
        "zonal_job_memory",
        "Job memory the workers hold.",
        Some(&Unit::Bytes),
        &gauge(m.total.job_memory_bytes),
    )?;
    emit(
        "zonal_workers",
        "Workers in the pool.",
        None,
        &gauge(m.workers.len() as u64),
    )?;
    emit(
        "zonal_workers_pinned",
        "Workers pinned to their CPU now (displacement.rs).",
        None,
        &gauge(m.workers.iter().filter(|w| w.pinned).count() as u64),
    )?;
    emit(
        "zonal_workers_displaced",
        "Pinned workers pushed off their CPU (offline, or affinity changed) and not yet \
         pinned again.",
        None,
        &gauge(m.displaced_workers as u64),
    )?;
    emit(
        "zonal_displacements",
        "Times a worker found itself displaced from its CPU.",
        None,
        &counter(m.total.displacements),
    )?;
    emit(
        "zonal_repins",
        "Times a displaced worker pinned itself to its CPU again.",
        None,
        &counter(m.total.repins),
    )?;
    emit(
        "zonal_pin_fallback_workers",
        "Workers that run unpinned because pinning them failed at the build (the default \
         pinning mode; the build's warning says why).",
        None,
        &gauge(m.pin_fallback_workers as u64),
    )?;
    emit(
        "zonal_topology_discovered",
        "1 when the topology is this machine's, discovered; 0 for the flat fallback (one \
         node, unpinned, where this machine cannot be discovered) and for a virtual \
         topology.",
        None,
        &gauge(u64::from(m.topology_discovered)),
    )?;
    emit(
        "zonal_policy",
        "The pool's stealing policy and topology.",
        None,
        &Info::new(vec![
            ("policy", m.policy.clone()),
            ("levels", m.levels.to_string()),
            ("zone_depth", m.zone_depth.to_string()),
        ]),
    )
}

/// Encodes the series of `m` through a registry's encoder.
fn encode_series(m: &PoolMetrics, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
    series(m, &mut |name, help, unit, metric| {
        metric.encode(encoder.encode_descriptor(name, help, unit, metric.metric_type())?)
    })
}

/// A pool's series as a `prometheus-client` [`Collector`] (feature `control-plane`), to
/// register in a [`Registry`] of your own next to your own metrics: each encoding of the
/// registry takes a fresh snapshot of the pool ([`MetricsHandle::snapshot`]) and writes
/// the same series as [`ControlPlane::serve_metrics`](crate::ControlPlane::serve_metrics)
/// (`zonal_steals_total{level}`, `zonal_refusals_total{reason}`, ...). A registry
/// prefix or constant labels (`Registry::with_prefix`, `sub_registry_with_label`) apply
/// to them as to any collector's.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use prometheus_client::metrics::counter::Counter;
/// use prometheus_client::registry::Registry;
/// use zonal::runtime::{PoolCollector, ThreadPoolBuilder};
/// let pool = ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
///
/// let mut registry = Registry::default();
/// let requests: Counter = Counter::default();
/// registry.register("requests", "Requests served", requests.clone());
/// registry.register_collector(Box::new(PoolCollector::new(pool.metrics_handle())));
///
/// pool.par_for(0..1000, 10, |_| {});
/// requests.inc();
/// // In your own HTTP handler (hyper, axum, ...), with the content type
/// // `zonal::runtime::METRICS_CONTENT_TYPE`:
/// let mut body = String::new();
/// prometheus_client::encoding::text::encode(&mut body, &registry)?;
/// assert!(body.contains("requests_total 1"));
/// assert!(body.contains("zonal_steals_total{level=\"I\"}"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct PoolCollector {
    source: Source,
}

/// Where a [`PoolCollector`] takes its snapshot.
#[derive(Clone, Debug)]
enum Source {
    /// A fresh one at each encoding.
    Live(MetricsHandle),
    /// One taken before (the built-in endpoint, [`encode_metrics`]).
    Taken(Box<PoolMetrics>),
}

impl PoolCollector {
    /// A collector of the pool `handle` is of ([`ThreadPool::metrics_handle`]).
    ///
    /// [`ThreadPool::metrics_handle`]: crate::ThreadPool::metrics_handle
    #[must_use]
    pub fn new(handle: MetricsHandle) -> Self {
        Self {
            source: Source::Live(handle),
        }
    }
}

impl Collector for PoolCollector {
    fn encode(&self, encoder: DescriptorEncoder<'_>) -> fmt::Result {
        match &self.source {
            Source::Live(h) => encode_series(&h.snapshot(), encoder),
            Source::Taken(m) => encode_series(m, encoder),
        }
    }
}

/// The exposition of the snapshot `m` in the OpenMetrics text format, ending with
/// OpenMetrics' `# EOF` (feature `control-plane`): the body
/// [`ControlPlane::serve_metrics`](crate::ControlPlane::serve_metrics) answers with, to
/// serve from a handler of your own (content type [`METRICS_CONTENT_TYPE`]). To add your
/// own series, register a [`PoolCollector`] in your registry instead. See also
/// [`MetricsHandle::encode`], which takes the snapshot itself.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let text = zonal::runtime::encode_metrics(&pool.metrics())?;
/// assert!(text.contains("zonal_workers 32"));
/// assert!(text.ends_with("# EOF\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A formatting error of the encoder (writing to a `String` does not fail).
pub fn encode_metrics(m: &PoolMetrics) -> Result<String, fmt::Error> {
    encode_snapshot(m.clone())
}

/// As [`encode_metrics`], consuming the snapshot.
pub(crate) fn encode_snapshot(m: PoolMetrics) -> Result<String, fmt::Error> {
    let mut out = String::with_capacity(4096 + 64 * m.workers.len());
    let mut r = Registry::default();
    r.register_collector(Box::new(PoolCollector {
        source: Source::Taken(Box::new(m)),
    }));
    prometheus_client::encoding::text::encode(&mut out, &r)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ThreadPoolBuilder;

    /// A virtual S1 pool that has run a parallel loop (steals to report).
    fn busy_s1_pool() -> crate::ThreadPool {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap();
        pool.par_for(0..1000, 10, |_| {});
        pool
    }

    #[test]
    fn levels_are_roman_numerals() {
        let got: Vec<String> = (0..10).map(level_label).collect();
        assert_eq!(
            got,
            ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
        );
        assert_eq!(level_label(48), "XLIX");
    }

    #[test]
    fn a_snapshot_has_every_series() {
        let pool = busy_s1_pool();
        let m = pool.metrics();
        let text = encode_metrics(&m).unwrap();
        for series in [
            "# TYPE zonal_steals counter",
            "zonal_steals_total{level=\"I\"}",
            "zonal_steals_total{level=\"VI\"}",
            "zonal_refusals_total{reason=\"zone\"}",
            "zonal_migrations_total{level=\"II\",source=\"steal\"}",
            "zonal_migrations_total{level=\"II\",source=\"balance\"} 0",
            "zonal_queue_length{worker=\"31\",node=\"15\"}",
            "# TYPE zonal_task_turnaround_seconds histogram",
            "zonal_task_turnaround_seconds_bucket{le=\"+Inf\"} 0",
            "zonal_task_turnaround_seconds_count 0",
            "zonal_workers 32",
            "zonal_workers_pinned 0", // a virtual pool pins nothing
            "zonal_workers_displaced 0",
            "zonal_displacements_total 0",
            "zonal_repins_total 0",
            "# HELP zonal_pin_fallback_workers Workers that run unpinned because pinning",
            "# TYPE zonal_pin_fallback_workers gauge",
            "zonal_pin_fallback_workers 0",
            "# HELP zonal_topology_discovered 1 when the topology is this machine's",
            "# TYPE zonal_topology_discovered gauge",
            "zonal_topology_discovered 0", // a preset is not this machine
            "zonal_policy_info{policy=\"none\",levels=\"6\",zone_depth=",
            "# EOF",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
        let run = format!("zonal_tasks_run_total {}\n", m.total.tasks_run);
        assert!(text.contains(&run), "{run} missing from\n{text}");
        // Series come in a fixed order: by level, steal before balance, by worker.
        let lines = |prefix: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.starts_with(prefix))
                .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
                .collect()
        };
        let steals: Vec<String> = (0..6)
            .map(|i| format!("zonal_steals_total{{level=\"{}\"}}", level_label(i)))
            .collect();
        assert_eq!(lines("zonal_steals_total"), steals);
        let migrations: Vec<String> = (0..6)
            .flat_map(|i| {
                ["steal", "balance"].map(|s| {
                    format!(
                        "zonal_migrations_total{{level=\"{}\",source=\"{s}\"}}",
                        level_label(i)
                    )
                })
            })
            .collect();
        assert_eq!(lines("zonal_migrations_total"), migrations);
        let queues: Vec<String> = m
            .workers
            .iter()
            .map(|w| {
                format!(
                    "zonal_queue_length{{worker=\"{}\",node=\"{}\"}}",
                    w.worker.unwrap(),
                    w.node.unwrap()
                )
            })
            .collect();
        assert_eq!(lines("zonal_queue_length{"), queues);
    }

    /// The two gauges follow the snapshot: a pinning fallback and a discovered topology.
    #[test]
    fn the_pin_fallback_and_discovery_gauges_follow_the_snapshot() {
        let mut m = busy_s1_pool().metrics();
        m.pin_fallback_workers = 3;
        m.pin_fallback_reason = Some("worker 0, CPU 0: refused".into());
        m.topology_discovered = true;
        let text = encode_metrics(&m).unwrap();
        for series in [
            "zonal_pin_fallback_workers 3\n",
            "zonal_topology_discovered 1\n",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
    }

    /// A pool over this machine, as built here: discovered (Linux), nothing fell back.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pool_over_this_machine_reports_its_topology_discovered() {
        let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
        let text = pool.metrics_handle().encode().unwrap();
        for series in [
            "zonal_pin_fallback_workers 0\n",
            "zonal_topology_discovered 1\n",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
    }

    #[test]
    fn the_histogram_is_cumulative_in_seconds() {
        let h = crate::turnaround::TurnaroundHistogram::new();
        h.record(std::time::Duration::from_micros(15)); // (10 µs, 20 µs]
        h.record(std::time::Duration::from_secs(500)); // above 100 s
        let m = PoolMetrics {
            turnaround: h.snapshot(),
            ..PoolMetrics::default()
        };
        let text = encode_metrics(&m).unwrap();
        let buckets: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("zonal_task_turnaround_seconds_bucket"))
            .collect();
        assert_eq!(buckets.len(), 23, "{text}");
        assert!(buckets[0].ends_with(" 0"), "{}", buckets[0]);
        assert!(buckets[1].ends_with(" 1"), "{}", buckets[1]);
        assert!(buckets[21].ends_with(" 1"), "{}", buckets[21]);
        assert_eq!(
            buckets[22],
            "zonal_task_turnaround_seconds_bucket{le=\"+Inf\"} 2"
        );
        assert!(text.contains("zonal_task_turnaround_seconds_count 2\n"));
        assert!(text.contains("zonal_task_turnaround_seconds_sum 500.000015"));
    }

    /// The `# TYPE` lines of an exposition: its families, in order.
    fn families(text: &str) -> Vec<&str> {
        text.lines().filter(|l| l.starts_with("# TYPE ")).collect()
    }

    #[test]
    fn a_user_registry_holds_the_collector_next_to_its_own_series() {
        let pool = busy_s1_pool();
        let mut registry = Registry::default();
        let requests: Counter = Counter::default();
        registry.register("requests", "Requests served", requests.clone());
        registry.register_collector(Box::new(PoolCollector::new(pool.metrics_handle())));
        requests.inc_by(3);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for series in [
            "# HELP requests Requests served.",
            "requests_total 3\n",
            "zonal_steals_total{level=\"I\"}",
            "zonal_refusals_total{reason=\"zone\"}",
            "zonal_migrations_total{level=\"II\",source=\"balance\"} 0",
            "zonal_task_turnaround_seconds_count 0",
            "zonal_workers 32\n",
            "zonal_policy_info{policy=\"none\",levels=\"6\",zone_depth=",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        // The user's family, then exactly the built-in endpoint's, in its order.
        let builtin = encode_metrics(&pool.metrics()).unwrap();
        let mut expected = vec!["# TYPE requests counter"];
        expected.extend(families(&builtin));
        assert_eq!(families(&text), expected);
    }

    #[test]
    fn the_collector_takes_a_fresh_snapshot_at_each_encoding() {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(PoolCollector::new(pool.metrics_handle())));
        let tasks_run = |r: &Registry| -> u64 {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, r).unwrap();
            let line = text
                .lines()
                .find(|l| l.starts_with("zonal_tasks_run_total "))
                .unwrap()
                .to_owned();
            line.rsplit_once(' ').unwrap().1.parse().unwrap()
        };
        let before = tasks_run(&registry);
        pool.par_for(0..1000, 10, |_| {});
        assert!(tasks_run(&registry) >= before + 100);
    }

    #[test]
    fn a_registry_prefix_applies_to_the_pool_series() {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap();
        let mut registry = Registry::with_prefix("app");
        registry.register_collector(Box::new(PoolCollector::new(pool.metrics_handle())));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("app_zonal_steals_total{level=\"I\"}"),
            "{text}"
        );
        assert!(text.contains("app_zonal_workers 32\n"), "{text}");
    }
}
