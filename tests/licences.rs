//! Every published crate of the workspace carries both licence texts, identical to the
//! repository's, and its package (`cargo package --list`, the files crates.io would
//! receive) includes them; its manifest names the licences (`license`).

use std::path::Path;
use std::process::Command;

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

#[test]
fn every_published_crate_ships_both_licence_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = cargo()
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut published = Vec::new();
    for p in meta["packages"].as_array().unwrap() {
        // `publish = false` is an empty list; unset (null) means crates.io.
        if p["publish"].as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        let name = p["name"].as_str().unwrap().to_owned();
        assert_eq!(p["license"], "MIT OR Apache-2.0", "{name}");
        let dir = Path::new(p["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_owned();
        for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let text = std::fs::read(dir.join(file))
                .unwrap_or_else(|e| panic!("{name}: {}: {e}", dir.join(file).display()));
            assert_eq!(
                text,
                std::fs::read(root.join(file)).unwrap(),
                "{name}: {file}"
            );
        }
        let list = cargo()
            .args([
                "package",
                "--list",
                "--allow-dirty",
                "--offline",
                "-p",
                &name,
            ])
            .current_dir(root)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&list.stderr);
        assert!(list.status.success(), "{name}: {stderr}");
        let files = String::from_utf8_lossy(&list.stdout);
        for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(
                files.lines().any(|l| l == file),
                "{name} leaves out {file}: {files}"
            );
        }
        published.push(name);
    }
    published.sort();
    assert_eq!(
        published,
        [
            "zonal",
            "zonal-mpi",
            "zonal-policy",
            "zonal-runtime",
            "zonal-sim",
            "zonal-topology"
        ]
    );
}
