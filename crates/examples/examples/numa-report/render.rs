//! `report.md`, and the verdict the wrong-node control allows.

use std::fmt::Write as _;

use zonal_examples::numa::kit::{Kit, CONTROL, CONTROL_TWIN, WORKLOADS};

use crate::{Args, ControlRow, Report, Row};

/// Bytes as MiB or GiB.
fn size(bytes: u64) -> String {
    let mib = bytes as f64 / f64::from(1u32 << 20);
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

/// A share as a percentage, or `n/a`.
fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_owned(), |x| format!("{:.0}%", x * 100.0))
}

/// The reasons pages had no node, over every row, with their counts.
fn unknown_reasons(r: &Report) -> String {
    let mut all: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for x in &r.results {
        for (why, n) in &x.kernel.errors_by_reason {
            *all.entry(why).or_default() += n;
        }
    }
    all.iter()
        .map(|(why, n)| format!("{why} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The kernel's page counts, node by node.
fn pages(row: &Row) -> String {
    let k = &row.kernel;
    if let Some(why) = &k.unavailable {
        return format!("unavailable: {why}");
    }
    let total = k.placed() + k.errors;
    if total == 0 {
        return "no pages".to_owned();
    }
    let mut parts: Vec<String> = k
        .by_node
        .iter()
        .map(|(n, p)| format!("node {n}: {:.0}%", *p as f64 * 100.0 / total as f64))
        .collect();
    if k.errors > 0 {
        parts.push(format!(
            "no node: {:.0}%",
            k.errors as f64 * 100.0 / total as f64
        ));
    }
    parts.join(", ")
}

/// The verdict lines: none unless the control's penalty exceeds the spread on every runtime.
pub(crate) fn verdict(
    kit: &Kit,
    results: &[Row],
    control: &[ControlRow],
    allowed: bool,
    args: &Args,
) -> Vec<String> {
    if let Some(why) = &args.timings_meaningless {
        return vec![format!(
            "No verdict: the timings are meaningless here ({why})."
        )];
    }
    if kit.one_node() {
        return vec![
            "No verdict: one node shows no NUMA effect, so nothing here says which runtime \
             is faster on a NUMA machine."
                .to_owned(),
        ];
    }
    if !allowed {
        let worst = control
            .iter()
            .map(|c| {
                format!(
                    "{}: penalty {:+.0}% vs spread {:.0}%",
                    c.runtime,
                    c.penalty * 100.0,
                    c.spread * 100.0
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return vec![format!(
            "No verdict: the wrong-node control does not show a remote penalty larger than \
             the run-to-run spread on every runtime ({worst})."
        )];
    }
    let mut out = vec![
        "The wrong-node control shows a remote penalty larger than the run-to-run spread on \
         every runtime: differences larger than both runtimes' spreads are reported."
            .to_owned(),
    ];
    for w in WORKLOADS {
        let rows: Vec<&Row> = results
            .iter()
            .filter(|r| r.workload == w && r.not_expressible.is_none() && r.median > 0.0)
            .collect();
        let Some(best) = rows.iter().min_by(|a, b| a.median.total_cmp(&b.median)) else {
            continue;
        };
        let beaten: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.runtime != best.runtime
                    && r.min > best.max
                    && (r.median / best.median - 1.0) > r.spread.max(best.spread)
            })
            .map(|r| {
                format!(
                    "{} ({:+.0}%)",
                    r.runtime,
                    (r.median / best.median - 1.0) * 100.0
                )
            })
            .collect();
        if !beaten.is_empty() {
            out.push(format!(
                "{w}: {} is faster than {}.",
                best.runtime,
                beaten.join(", ")
            ));
        }
    }
    out
}

/// The Markdown report.
pub(crate) fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Zonal NUMA report\n");
    let _ = writeln!(
        s,
        "`numa-report` ({} mode, schema {}), {:.0} s of a {} s budget. Runtimes: {}.\n",
        r.mode,
        r.schema_version,
        r.elapsed_seconds,
        r.budget_seconds,
        r.runtimes.join(", ")
    );
    if r.one_node {
        let _ = writeln!(
            s,
            "> **One node: this machine shows no NUMA effect.** Every workload ran, and the \
             tables below are real, but local and remote memory are the same here: the \
             control cannot show a remote penalty, and no runtime is called faster.\n"
        );
    }
    if let Some(why) = &r.timings_meaningless {
        let _ = writeln!(
            s,
            "> **Timings are meaningless here** ({why}): read the locality columns only.\n"
        );
    }
    let _ = writeln!(s, "## Machine\n");
    let _ = writeln!(
        s,
        "| node | CPUs | allowed CPUs | memory |\n|---|---|---|---|"
    );
    for n in &r.machine.nodes {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            n.os_id,
            n.cpus.len(),
            n.allowed_cpus.len(),
            n.memory_bytes.map_or_else(|| "unknown".to_owned(), size)
        );
    }
    let rows: Vec<String> = r
        .machine
        .distances
        .iter()
        .map(|row| row.iter().map(u32::to_string).collect::<Vec<_>>().join(" "))
        .collect();
    let _ = writeln!(
        s,
        "\nDistances (SLIT, row by row): `{}`. {} of {} online CPUs allowed. Node A (one-node \
         workloads): {}; node B (the control's data): {}.\n",
        rows.join(" / "),
        r.machine.cpus_allowed,
        r.machine.cpus_online,
        r.node_a.os_id,
        r.node_b.os_id
    );
    let c = &r.confounders;
    let _ = writeln!(s, "## What confounds these figures\n");
    let _ = writeln!(s, "| setting | value |\n|---|---|");
    for (k, v) in [
        (
            "kernel.numa_balancing (automatic page migration)",
            &c.numa_balancing,
        ),
        ("transparent huge pages", &c.transparent_hugepages),
        ("THP defrag", &c.thp_defrag),
        ("SMT active", &c.smt_active),
        ("CPU governor (cpu0)", &c.cpu_governor),
        ("kernel", &c.kernel),
        ("Zonal commit", &c.zonal_commit),
    ] {
        let _ = writeln!(s, "| {k} | `{v}` |");
    }
    let _ = writeln!(
        s,
        "| virtual machine (cpuinfo `hypervisor` flag) | {} |\n",
        if r.virtualized { "yes" } else { "no" }
    );
    let _ = writeln!(s, "## What could not be measured\n");
    if r.unmeasured.is_empty() {
        let _ = writeln!(s, "Nothing: every node had CPUs, memory could be bound.\n");
    }
    for u in &r.unmeasured {
        let _ = writeln!(s, "- {u}");
    }
    let _ = writeln!(
        s,
        "\n## Results\n\nData per node: {} ({}). Each figure is beside where its task \
         slices ran (`sched_getcpu` against `move_pages` on the slice's pages) and where the \
         kernel held the pages after the runs.\n",
        size(r.sizes.bytes_per_node as u64),
        r.sizes.source
    );
    for w in &r.workloads {
        let _ = writeln!(s, "### {w}\n\n![{w}]({w}.svg)\n");
        let _ = writeln!(
            s,
            "| runtime | median | min–max | spread | runs | slices on their data's node | kernel: pages by node | result |\n|---|---|---|---|---|---|---|---|"
        );
        for row in r.results.iter().filter(|x| &x.workload == w) {
            if let Some(why) = &row.not_expressible {
                let _ = writeln!(
                    s,
                    "| {} | not expressible: {why} | | | | | | |",
                    row.runtime
                );
                continue;
            }
            let _ = writeln!(
                s,
                "| {} | {:.2} {} | {:.2}–{:.2} | {:.0}% | {} | {} of {} ({}) | {} | `{}` |",
                row.runtime,
                row.median,
                row.unit,
                row.min,
                row.max,
                row.spread * 100.0,
                row.samples.len(),
                row.slices.on_data_node,
                row.slices.slices,
                pct(row.slices.share_on_data_node),
                pages(row),
                row.checksum
            );
        }
        let _ = writeln!(s);
    }
    if r.results.iter().any(|x| x.kernel.errors > 0) {
        let _ = writeln!(
            s,
            "Pages with no node: neither `move_pages` nor a second source could name their \
             node (by reason: {}). With `kernel.numa_balancing` = `{}`, the kernel makes idle \
             pages `PROT_NONE` to sample their accesses (NUMA hinting faults), and Linux \
             6.1–6.4's `move_pages` answers `ENOENT` for them; the report then reads \
             `/proc/self/pagemap`, whose frame numbers need `CAP_SYS_ADMIN`, and \
             `/proc/self/numa_maps`, which names a node only for a mapping all on one node. \
             Nothing is touched to find out (a touch would migrate the page). Buffers bound \
             to a node (Zonal's `NodeBuffer`) are not scanned.\n",
            unknown_reasons(r),
            r.confounders.numa_balancing
        );
    }
    let _ = writeln!(
        s,
        "## The wrong-node control\n\n`{CONTROL}` runs `{CONTROL_TWIN}`'s triad with every \
         thread on node A and the data bound to node B. Its remote penalty against \
         `{CONTROL_TWIN}` (same threads, data on A) is this machine's cost of remote memory; \
         a runtime is called faster only if that penalty exceeds the run-to-run spread.\n"
    );
    let _ = writeln!(s, "| runtime | remote penalty | spread |\n|---|---|---|");
    for c in &r.control {
        let _ = writeln!(
            s,
            "| {} | {:+.0}% | {:.0}% |",
            c.runtime,
            c.penalty * 100.0,
            c.spread * 100.0
        );
    }
    let _ = writeln!(s, "\n## Verdict\n");
    for v in &r.verdict {
        let _ = writeln!(s, "- {v}");
    }
    if !r.problems.is_empty() {
        let _ = writeln!(s, "\n## Problems\n");
        for p in &r.problems {
            let _ = writeln!(s, "- {p}");
        }
    }
    let _ = writeln!(
        s,
        "\n![locality](locality.svg)\n\nRaw figures: `report.json` (schema {}); the \
         machine: `topology.json`. The host name is not recorded.",
        r.schema_version
    );
    s
}
