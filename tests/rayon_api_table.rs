//! README.md's table of rayon's API in Zonal is current: every public item of rayon (the
//! dev-dependency, whose sources `cargo metadata` locates in cargo's registry) and of
//! rayon-core, with Zonal's item of the same path and name or the reason there is none.
//! `ZONAL_BLESS=1 cargo test --test rayon_api_table` rewrites the table.
//!
//! The count of missing items may only go down (`MAX_MISSING`), and is zero: every
//! rayon item has a Zonal counterpart or a reason it has none.

mod rayon_api;

use std::path::{Path, PathBuf};
use std::process::Command;

use rayon_api::scan::Crates;
use rayon_api::table;

const BEGIN: &str = "<!-- rayon-api:begin -->\n";
const END: &str = "<!-- rayon-api:end -->";

/// Items of rayon with neither a Zonal counterpart nor a reason, at most.
static MAX_MISSING: usize = 0;

/// (name, version, `src/lib.rs`) of the packages cargo resolved for this workspace.
fn packages() -> Vec<(String, String, PathBuf)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    v["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
            let lib = manifest.parent().expect("package dir").join("src/lib.rs");
            (
                p["name"].as_str().expect("name").to_owned(),
                p["version"].as_str().expect("version").to_owned(),
                lib,
            )
        })
        .collect()
}

#[test]
fn the_readme_table_lists_every_rayon_item() {
    let pkgs = packages();
    let find = |name: &str| {
        pkgs.iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("{name} is not in cargo metadata"))
            .clone()
    };
    let (_, rayon_version, rayon_lib) = find("rayon");
    let (_, core_version, core_lib) = find("rayon-core");
    let mut rayon = Crates::default();
    rayon.add_crate("rayon", &rayon_lib);
    rayon.add_crate("rayon_core", &core_lib);

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut zonal = Crates::default();
    zonal.add_crate("zonal", &root.join("src/lib.rs"));
    for (krate, dir) in [
        ("zonal_runtime", "crates/runtime"),
        ("zonal_topology", "crates/topology"),
        ("zonal_policy", "crates/policy"),
    ] {
        zonal.add_crate(krate, &root.join(dir).join("src/lib.rs"));
    }

    let reasons_text =
        std::fs::read_to_string(root.join("tests/rayon_api/reasons.txt")).expect("reasons.txt");
    let reasons = table::parse_reasons(&reasons_text);
    let rows = table::rows(&rayon, &zonal, &reasons);
    assert!(
        rows.len() > 300,
        "too few rayon items found: {}",
        rows.len()
    );
    // Every reason names a rayon item that exists and that Zonal indeed lacks.
    for path in reasons.keys() {
        let row = rows.iter().find(|r| &r.rayon == path);
        let row = row.unwrap_or_else(|| panic!("reasons.txt names {path}, which rayon lacks"));
        assert!(
            row.zonal.is_none(),
            "reasons.txt names {path}, which Zonal has"
        );
    }
    let block = table::render(&rows, &rayon_version, &core_version);

    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let start = readme
        .find(BEGIN)
        .expect("README.md has the rayon-api:begin marker")
        + BEGIN.len();
    let end = readme
        .find(END)
        .expect("README.md has the rayon-api:end marker");
    if std::env::var_os("ZONAL_BLESS").is_some() {
        let new = format!("{}{block}{}", &readme[..start], &readme[end..]);
        std::fs::write(&readme_path, new).expect("write README.md");
    } else {
        assert!(
            readme[start..end] == block,
            "README.md's rayon table is stale: run `ZONAL_BLESS=1 cargo test --test rayon_api_table`"
        );
    }
    let missing: Vec<&str> = rows
        .iter()
        .filter(|r| r.zonal.is_none() && r.reason.is_none())
        .map(|r| r.rayon.as_str())
        .collect();
    assert!(
        missing.len() <= MAX_MISSING,
        "{} rayon items have no Zonal counterpart and no reason (at most {MAX_MISSING}): {missing:?}",
        missing.len()
    );
}
