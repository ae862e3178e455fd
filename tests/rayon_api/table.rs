//! The "rayon's API in Zonal" table of README.md: one row per public item of rayon (and of
//! rayon-core where rayon does not re-export it), methods of traits and types included, with
//! Zonal's item of the same path and name, or the reason there is none (`reasons.txt`).

use std::collections::{BTreeMap, BTreeSet};

use super::scan::{Crates, DefId, Kind};

/// One row.
#[derive(Debug)]
pub struct Row {
    pub rayon: String,
    pub kind: Kind,
    /// Zonal's item, or `None`.
    pub zonal: Option<String>,
    pub reason: Option<String>,
}

/// The rows, in module order. A trait's or type's methods follow its row at the path where
/// it is defined (`rayon::str::ParallelString`, not the prelude's re-export).
pub fn rows(rayon: &Crates, zonal: &Crates, reasons: &BTreeMap<String, String>) -> Vec<Row> {
    let mut modules = rayon.public_modules("rayon");
    modules.sort();
    let mut entries = Vec::new();
    for module in &modules {
        for (name, (def, kind)) in rayon.names("rayon", module) {
            if !matches!(kind, Kind::Module | Kind::CrateAlias) {
                entries.push(("rayon", module.clone(), name, def, kind));
            }
        }
    }
    // rayon-core's own root items that rayon does not re-export.
    let root_names: BTreeSet<String> = entries
        .iter()
        .filter(|e| e.1.is_empty())
        .map(|e| e.2.clone())
        .collect();
    for (name, (def, kind)) in rayon.names("rayon_core", &[]) {
        if !matches!(kind, Kind::Module | Kind::CrateAlias) && !root_names.contains(&name) {
            entries.push(("rayon_core", Vec::new(), name, def, kind));
        }
    }
    // Where each definition's methods are listed: its defining module's entry if public,
    // else its first entry.
    let mut home: BTreeMap<DefId, usize> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let defining = e.0 == "rayon" && e.3.krate == "rayon" && e.3.module == e.1;
        match home.get(&e.3) {
            Some(_) if !defining => {}
            _ if defining || !home.contains_key(&e.3) => {
                home.insert(e.3.clone(), i);
            }
            _ => {}
        }
    }
    let mut rows = Vec::new();
    for (i, (krate, module, name, def, kind)) in entries.iter().enumerate() {
        let zonal_names = zonal.names("zonal", module);
        let here = join(krate, module, name);
        let there = zonal_names.get(name);
        let counterpart = there.map(|_| join("zonal", module, name));
        push(&mut rows, &here, *kind, counterpart, reasons);
        if home.get(def) == Some(&i) {
            methods_rows(
                &mut rows,
                rayon,
                zonal,
                (&here, def, *kind),
                there,
                module,
                reasons,
            );
        }
    }
    rows
}

fn methods_rows(
    rows: &mut Vec<Row>,
    rayon: &Crates,
    zonal: &Crates,
    (here, def, kind): (&str, &DefId, Kind),
    there: Option<&(DefId, Kind)>,
    module: &[String],
    reasons: &BTreeMap<String, String>,
) {
    let theirs = there.map(|(d, k)| zonal.methods(d, *k)).unwrap_or_default();
    let owner = here.rsplit("::").next().unwrap_or_default();
    for m in rayon.methods(def, kind) {
        let zonal_path = theirs
            .contains(&m)
            .then(|| format!("{}::{m}", join("zonal", module, owner)));
        push(
            rows,
            &format!("{here}::{m}"),
            Kind::Function,
            zonal_path,
            reasons,
        );
    }
}

fn push(
    rows: &mut Vec<Row>,
    rayon: &str,
    kind: Kind,
    zonal: Option<String>,
    reasons: &BTreeMap<String, String>,
) {
    let reason = reasons.get(rayon).cloned();
    rows.push(Row {
        rayon: rayon.to_owned(),
        kind,
        zonal,
        reason,
    });
}

fn join(krate: &str, module: &[String], name: &str) -> String {
    let mut s = krate.to_owned();
    for m in module {
        s.push_str("::");
        s.push_str(m);
    }
    s.push_str("::");
    s.push_str(name);
    s
}

/// The README block: a summary line and the table (inside `<details>`).
pub fn render(rows: &[Row], rayon_version: &str, core_version: &str) -> String {
    let present = rows.iter().filter(|r| r.zonal.is_some()).count();
    let reasoned = rows
        .iter()
        .filter(|r| r.zonal.is_none() && r.reason.is_some())
        .count();
    let missing = rows.len() - present - reasoned;
    let mut s = String::new();
    s.push_str(&format!(
        "Of the {} public items of rayon {rayon_version} and rayon-core {core_version} \
         (methods included), Zonal has {present} under the same path and name; {reasoned} \
         have none, for the reason given; {missing} are still missing. Generated \
         from both crates' sources by `tests/rayon_api_table.rs` \
         (`ZONAL_BLESS=1 cargo test --test rayon_api_table` rewrites it).\n\n",
        rows.len()
    ));
    s.push_str("<details><summary>Every rayon item and its Zonal counterpart</summary>\n\n");
    s.push_str("| rayon | kind | Zonal |\n|---|---|---|\n");
    for r in rows {
        let zonal = match (&r.zonal, &r.reason) {
            (Some(z), _) => format!("`{z}`"),
            (None, Some(why)) => format!("none: {why}"),
            (None, None) => "**missing**".to_owned(),
        };
        s.push_str(&format!(
            "| `{}` | {} | {zonal} |\n",
            r.rayon,
            r.kind.word()
        ));
    }
    s.push_str("\n</details>\n");
    s
}

/// Reads `reasons.txt`: `rayon path<TAB>reason` per line, `#` comments.
pub fn parse_reasons(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (path, why) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("reasons.txt: no tab in {l:?}"));
            (path.trim().to_owned(), why.trim().to_owned())
        })
        .collect()
}
