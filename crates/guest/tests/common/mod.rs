//! What the probe tests share: every boot's NUMA balancing, on with an aggressive scanner
//! ([`AGGRESSIVE_SCANNER`]), the binaries they boot (`zonal-probe`, the `workload` and
//! `service` examples, and the probe built without hwloc), the two guest shapes, one boot
//! per shape and job (kept on disk under `CARGO_TARGET_TMPDIR`, keyed by the binaries and
//! the job, so that the test files that read the same guest boot it once), the parsing of
//! each step's output, and the assertions on the `pinning` and `memory` checks that more
//! than one boot makes.
//!
//! A missing binary fails with the command that builds it. A host without QEMU, busybox or
//! a kernel skips (prints why and returns `None`) unless `ZONAL_GUEST_REQUIRED` is set.

#![allow(dead_code, unreachable_pub)]

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use zonal_guest::{
    find_busybox, find_kernel, CpuCount, Guest, GuestNode, GuestSpec, Initramfs, Shape,
};

pub mod assertions;

/// Marks the start of a step's output in the job: `ZONAL-STEP name`.
const STEP: &str = "ZONAL-STEP ";
/// Marks its end: `ZONAL-STEP-END name rc=N`.
const STEP_END: &str = "ZONAL-STEP-END ";

/// The distance matrix of the 4-node guest: two pairs of nodes, 12 within a pair.
pub const NUMA4_DISTANCES: [[u32; 4]; 4] = [
    [10, 12, 20, 22],
    [12, 10, 22, 20],
    [20, 22, 10, 12],
    [22, 20, 12, 10],
];

/// The longest a test's guest may run, printing all along (a job that loops and prints).
/// Generous: emulated (TCG) guests on a loaded host run 10–50 times slower, and how long
/// a boot takes is no test's business; a hang is ended by [`QUIET_LIMIT`] long before.
pub const RUN_LIMIT: Duration = Duration::from_secs(3600);

/// How long a test's guest may print nothing before it counts as hung and is killed
/// ([`zonal_guest::GuestError::Silent`]): every step prints at its end (the job's
/// markers), the `service` example its progress line, and each step's own waits end sooner
/// (the `faults` probe's 300 s, `service`'s 300 s without a task finishing).
pub const QUIET_LIMIT: Duration = Duration::from_secs(600);

/// `guest` with the tests' limits: [`RUN_LIMIT`] and [`QUIET_LIMIT`].
pub fn limited(guest: Guest) -> Guest {
    guest.timeout(RUN_LIMIT).quiet_limit(QUIET_LIMIT)
}

/// The step every boot runs first: [`AGGRESSIVE_SCANNER`].
pub const SCANNER_STEP: &str = "numa-balancing";

/// Automatic NUMA balancing on, with its scanner as aggressive as it goes, in every guest
/// (the default configuration of the servers Zonal is for, made to bite at once): no delay
/// after the process starts, a pass every 10–20 ms over up to 1 GiB. Pages of default-policy
/// memory are then made `PROT_NONE` for hinting faults within about a second, and
/// `move_pages` answers `ENOENT` for them (Linux 6.1: see
/// `crates/runtime/src/os/pagemap.rs`); every placement check runs under it. Linux ≥ 5.13
/// keeps the knobs in debugfs (`/sys/kernel/debug/sched/numa_balancing/`), older kernels
/// as `kernel.numa_balancing_*` sysctls. Prints `name=value` for each, for
/// [`assert_aggressive_scanner`]; a knob that cannot be set fails the step.
pub const AGGRESSIVE_SCANNER: &str = "echo 1 > /proc/sys/kernel/numa_balancing || exit 1; \
    echo numa_balancing=$(cat /proc/sys/kernel/numa_balancing); \
    d=/sys/kernel/debug/sched/numa_balancing; \
    for kv in scan_delay_ms=0 scan_period_min_ms=10 scan_period_max_ms=20 scan_size_mb=1024; do \
      k=${kv%=*}; v=${kv#*=}; \
      if [ -d $d ]; then f=$d/$k; else f=/proc/sys/kernel/numa_balancing_$k; fi; \
      echo $v > $f || exit 1; echo $k=$(cat $f); \
    done";

/// Asserts that `boot`'s [`SCANNER_STEP`] turned NUMA balancing on with the aggressive
/// scanner.
pub fn assert_aggressive_scanner(boot: &Boot) {
    let step = boot.step(SCANNER_STEP);
    assert_eq!(step.rc, Some(0), "{}", step.text);
    for kv in [
        "numa_balancing=1",
        "scan_delay_ms=0",
        "scan_period_min_ms=10",
        "scan_period_max_ms=20",
        "scan_size_mb=1024",
    ] {
        assert!(
            step.text.lines().any(|l| l.trim() == kv),
            "the scanner is not set ({kv}):\n{}",
            step.text
        );
    }
}

/// One step of a job: a name and a shell command line.
pub struct Step {
    pub name: &'static str,
    pub command: String,
}

/// The output of one step of a boot.
#[derive(Clone, Debug)]
pub struct StepOutput {
    pub rc: Option<i32>,
    pub text: String,
}

impl StepOutput {
    /// The JSON after `PROBE-RESULT ` (a probe step).
    pub fn probe(&self) -> Value {
        let line = self
            .text
            .lines()
            .find_map(|l| l.strip_prefix("PROBE-RESULT "))
            .unwrap_or_else(|| panic!("no PROBE-RESULT line (rc {:?}):\n{}", self.rc, self.text));
        serde_json::from_str(line).unwrap_or_else(|e| panic!("PROBE-RESULT: {e}: {line}"))
    }

    /// Every line that holds a JSON object from its first `{` on (an example's `--json`
    /// output; a progress bar on the console may leave escape sequences before it).
    pub fn json_lines(&self) -> Vec<Value> {
        self.text
            .lines()
            .filter_map(|l| l.find('{').map(|i| &l[i..]))
            .filter_map(|l| serde_json::from_str::<Value>(l.trim_end()).ok())
            .filter(Value::is_object)
            .collect()
    }
}

/// A finished boot: its steps by name, and how long it took.
#[derive(Clone, Debug)]
pub struct Boot {
    pub steps: BTreeMap<String, StepOutput>,
    pub elapsed: Duration,
    pub cached: bool,
}

impl Boot {
    pub fn step(&self, name: &str) -> &StepOutput {
        self.steps
            .get(name)
            .unwrap_or_else(|| panic!("step {name} did not run; steps: {:?}", self.steps.keys()))
    }
}

/// `target/debug` (or the profile directory the tests were built in), from this test's
/// own path `…/target/debug/deps/name-hash`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary under target/<profile>/deps")
        .to_path_buf()
}

/// A binary the tests boot, or a panic naming the command that builds it.
pub fn binary(relative: &str, build: &str) -> PathBuf {
    let p = target_dir().join(relative);
    assert!(
        p.is_file(),
        "{} is missing: build it first with `{build}`",
        p.display()
    );
    p
}

pub fn probe_binary() -> PathBuf {
    binary("zonal-probe", "cargo build -p zonal-guest-probe")
}

/// The command that builds the probe without hwloc (as a Linux user who lacks libhwloc
/// builds it), run from the workspace root.
pub const NOHWLOC_PROBE_BUILD: &str =
    "cargo build -p zonal-guest-probe --no-default-features --target-dir target/nohwloc";

/// The probe built without hwloc: `target/nohwloc/debug/zonal-probe` under the workspace
/// root, or a panic naming [`NOHWLOC_PROBE_BUILD`].
pub fn nohwloc_probe_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/guest under the workspace root");
    let p = root.join("target/nohwloc/debug/zonal-probe");
    assert!(
        p.is_file(),
        "{} is missing: build it first with `{NOHWLOC_PROBE_BUILD}`",
        p.display()
    );
    p
}

pub fn example(name: &str) -> PathBuf {
    binary(
        &format!("examples/{name}"),
        &format!("cargo build --example {name}"),
    )
}

/// Whether the host can boot guests; prints why not when it cannot (and fails instead when
/// `ZONAL_GUEST_REQUIRED` is set, as `scripts/test.sh` sets it).
pub fn host_can_boot() -> bool {
    let missing: Vec<String> = [
        find_busybox().err().map(|e| e.to_string()),
        find_kernel().err().map(|e| e.to_string()),
        which("qemu-system-x86_64")
            .is_none()
            .then(|| "qemu-system-x86_64 not on PATH".to_owned()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("ZONAL_GUEST_REQUIRED").is_none(),
        "ZONAL_GUEST_REQUIRED is set but the host cannot boot guests: {missing:?} (scripts/setup-guest.sh)"
    );
    eprintln!("skipping the guest test: {missing:?} (scripts/setup-guest.sh installs them)");
    false
}

fn which(program: &str) -> Option<PathBuf> {
    if let Some(q) = std::env::var_os("ZONAL_GUEST_QEMU") {
        return Some(PathBuf::from(q));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The 4-node guest: 2 vCPUs and 128 MiB per node, [`NUMA4_DISTANCES`].
pub fn numa4() -> GuestSpec {
    let nodes = (0..4)
        .map(|os_id| GuestNode {
            os_id,
            cpus: 2,
            memory_mib: 128,
        })
        .collect();
    let rows = NUMA4_DISTANCES.iter().map(|r| r.to_vec()).collect();
    GuestSpec::new("numa4", nodes, rows).expect("numa4 spec")
}

/// The S1-shaped guest: the `s1` preset's 16 nodes × 2 CPUs and distances, 96 MiB a node
/// (the initramfs, some 30 MiB of binaries, is unpacked on one or two nodes, and buffers
/// bound there must still find room: with 48 MiB the OOM killer ended `locality`, and with
/// 64 MiB it once ended `service`, exit 137, when the binaries grew).
pub fn s1() -> GuestSpec {
    let machine = zonal_topology::presets::preset_machine("s1").expect("s1 preset");
    let shape = Shape {
        cpus_per_node: CpuCount::AsSource,
        memory_mib_per_node: 96,
    };
    GuestSpec::from_machine(&machine, &shape).expect("s1 guest spec")
}

/// Binaries go into the guest stripped (debug info is most of a debug binary, and the
/// initramfs lives in guest memory); the copy sits next to the cache, named after the host
/// path (two builds of `zonal-probe` are booted), and replaces an older copy in one rename
/// (tests that run at once may strip the same binary).
fn stripped(host: &Path) -> PathBuf {
    static COPIES: AtomicUsize = AtomicUsize::new(0);
    let name = host
        .file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    let mut h = DefaultHasher::new();
    host.hash(&mut h);
    let out =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stripped-{name}-{:016x}", h.finish()));
    let tmp = out.with_extension(format!(
        "{}-{}.tmp",
        std::process::id(),
        COPIES.fetch_add(1, Ordering::Relaxed)
    ));
    let fresh = std::process::Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&tmp)
        .arg(host)
        .status()
        .is_ok_and(|s| s.success())
        && std::fs::rename(&tmp, &out).is_ok();
    if fresh {
        out
    } else {
        let _ = std::fs::remove_file(&tmp);
        host.to_path_buf()
    }
}

/// The initramfs a boot with `binaries` (host path, guest path) starts from: busybox and
/// each binary, stripped, with the shared libraries `ldd` lists for it; no job yet.
pub fn initramfs(binaries: &[(PathBuf, &str)]) -> Initramfs {
    let mut initramfs = Initramfs::new(&find_busybox().expect("busybox")).expect("initramfs");
    for (host, guest) in binaries {
        initramfs = initramfs
            .binary(stripped(host), guest)
            .unwrap_or_else(|e| panic!("adding {}: {e}", host.display()));
    }
    initramfs
}

/// Boots `spec` once with `steps` and returns what each step printed, reusing a boot of
/// the same binaries, spec and steps made earlier (by this or another test file). `None`
/// when the host cannot boot guests.
pub fn boot(spec: &GuestSpec, binaries: &[(PathBuf, &str)], steps: &[Step]) -> Option<Boot> {
    boot_with(spec, binaries, steps, "", &|i| Ok(i))
}

/// [`boot`] with more in the guest: `extra` adds files to the initramfs (Open MPI's
/// run-time files, say) and `setup` is shell run before the steps. What `extra` adds is
/// not part of the cache key, `setup` is: `extra` must add the same files for the same
/// `setup`.
pub fn boot_with(
    spec: &GuestSpec,
    binaries: &[(PathBuf, &str)],
    steps: &[Step],
    setup: &str,
    extra: &dyn Fn(Initramfs) -> Result<Initramfs, zonal_guest::GuestError>,
) -> Option<Boot> {
    // One boot at a time in this process: the tests of one file share it.
    static LOCK: Mutex<()> = Mutex::new(());
    static HOST_OK: OnceLock<bool> = OnceLock::new();
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !*HOST_OK.get_or_init(host_can_boot) {
        return None;
    }
    let mut script = String::from(setup);
    script.push_str("cd /tmp 2>/dev/null || mkdir -p /tmp && cd /tmp\n");
    let scanner = Step {
        name: SCANNER_STEP,
        command: AGGRESSIVE_SCANNER.to_owned(),
    };
    for s in std::iter::once(&scanner).chain(steps) {
        script.push_str(&format!(
            "echo '{STEP}{name}'\n{cmd}\necho \"{STEP_END}{name} rc=$?\"\n",
            name = s.name,
            cmd = s.command
        ));
    }
    let mut h = DefaultHasher::new();
    spec.qemu_args(Path::new("k"), Path::new("i"), "")
        .hash(&mut h);
    script.hash(&mut h);
    for (host, guest) in binaries {
        let meta = std::fs::metadata(host).expect("binary metadata");
        (meta.len(), meta.modified().ok(), guest).hash(&mut h);
    }
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "guest-{}-{:016x}.txt",
        spec.name(),
        h.finish()
    ));
    if let Ok(text) = std::fs::read_to_string(&cache) {
        if let Some((secs, body)) = text.split_once('\n') {
            if let Ok(secs) = secs.parse::<f64>() {
                return Some(Boot {
                    steps: parse_steps(body),
                    elapsed: Duration::from_secs_f64(secs),
                    cached: true,
                });
            }
        }
    }
    let initramfs = extra(initramfs(binaries))
        .unwrap_or_else(|e| panic!("adding files to {}: {e}", spec.name()))
        .job(&script);
    let run = limited(Guest::new(spec.clone(), initramfs))
        .run()
        .unwrap_or_else(|e| panic!("booting {}: {e}", spec.name()));
    assert_eq!(
        run.exit_code,
        0,
        "the job failed in {}:\n{}\n--- console ---\n{}",
        spec.name(),
        run.job_output,
        run.console
    );
    let body = run.job_output;
    let tmp = cache.with_extension("tmp");
    if std::fs::write(&tmp, format!("{}\n{body}", run.elapsed.as_secs_f64())).is_ok() {
        let _ = std::fs::rename(&tmp, &cache);
    }
    eprintln!(
        "booted {} ({} vCPUs): {:.1} s",
        spec.name(),
        spec.cpu_count(),
        run.elapsed.as_secs_f64()
    );
    Some(Boot {
        steps: parse_steps(&body),
        elapsed: run.elapsed,
        cached: false,
    })
}

fn parse_steps(body: &str) -> BTreeMap<String, StepOutput> {
    let mut steps = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in body.lines() {
        // A marker may follow text on its line (a progress bar's escape sequences without a
        // newline): the text before it belongs to the step it ends.
        if let Some(at) = line.find(STEP_END) {
            if let Some((name, mut text)) = current.take() {
                text.push_str(&line[..at]);
                text.push('\n');
                let rc = line[at..]
                    .rsplit_once("rc=")
                    .and_then(|(_, rc)| rc.trim().parse().ok());
                steps.insert(name, StepOutput { rc, text });
            }
        } else if let Some(at) = line.find(STEP) {
            current = Some((line[at + STEP.len()..].trim().to_owned(), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    // A step cut short (the probe crashed the guest) still shows its output.
    if let Some((name, text)) = current {
        steps.insert(name, StepOutput { rc: None, text });
    }
    steps
}

#[test]
fn steps_parse_with_text_before_their_markers() {
    let body = "ZONAL-STEP a\nx\n\x1b[1A{\"k\":1}ZONAL-STEP-END a rc=0\njunk ZONAL-STEP b\ny\n";
    let steps = parse_steps(body);
    assert_eq!(steps["a"].rc, Some(0));
    assert_eq!(steps["a"].json_lines(), vec![serde_json::json!({"k": 1})]);
    assert_eq!(steps["b"].rc, None);
    assert_eq!(steps["b"].text, "y\n");
}

/// The 4-node guest's job: every check and both examples, in one boot.
pub fn numa4_boot() -> Option<Boot> {
    let binaries = [
        (probe_binary(), "/bin/zonal-probe"),
        (example("workload"), "/bin/workload"),
        (example("service"), "/bin/service"),
    ];
    boot(&numa4(), &binaries, &common_steps(true))
}

/// The S1-shaped guest's job: zones, the examples, and the locality figure, in one boot.
pub fn s1_boot() -> Option<Boot> {
    let binaries = [
        (probe_binary(), "/bin/zonal-probe"),
        (example("workload"), "/bin/workload"),
        (example("service"), "/bin/service"),
    ];
    let mut steps = common_steps(false);
    steps.push(free_memory("free-before-locality"));
    steps.push(Step {
        name: "locality",
        command: "/bin/zonal-probe locality --tasks-per-node 2 --slices 8".into(),
    });
    steps.push(free_memory("free-after-locality"));
    boot(&s1(), &binaries, &steps)
}

/// The 4-node guest booted with the probe built without hwloc ([`nohwloc_probe_binary`])
/// and nothing else of ours: `pinning`, `memory`, and every shared library in the guest's
/// root file system (step `shared-libraries`, one path a line).
pub fn numa4_nohwloc_boot() -> Option<Boot> {
    let binaries = [(nohwloc_probe_binary(), "/bin/zonal-probe")];
    let mut steps = Vec::from(pinning_and_memory());
    steps.push(Step {
        name: "shared-libraries",
        command: "find / -xdev -name '*.so*'".into(),
    });
    boot(&numa4(), &binaries, &steps)
}

/// Each node's free memory (diagnostics for a step the OOM killer ends).
fn free_memory(name: &'static str) -> Step {
    Step {
        name,
        command: "grep -h MemFree /sys/devices/system/node/node*/meminfo; \
                  dmesg | grep -i -A3 'out of memory\\|oom' | tail -20"
            .into(),
    }
}

/// The probe's `pinning` and `memory` checks.
fn pinning_and_memory() -> [Step; 2] {
    [
        Step {
            name: "pinning",
            command: "/bin/zonal-probe pinning".into(),
        },
        Step {
            name: "memory",
            command: "/bin/zonal-probe memory".into(),
        },
    ]
}

fn common_steps(all: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    if all {
        steps.extend(pinning_and_memory());
    }
    steps.push(Step {
        name: "first-touch",
        command: "/bin/zonal-probe first-touch".into(),
    });
    steps.push(Step {
        name: "hidden-pages",
        command: "/bin/zonal-probe hidden-pages".into(),
    });
    steps.push(Step {
        name: "zones",
        command: "/bin/zonal-probe zones --policy conservative-hard --policy linux".into(),
    });
    steps.push(Step {
        name: "workload",
        command: "/bin/workload --policy conservative-hard --workload all --tasks 48 \
                  --stream-len 4096 --grid 32 --json"
            .into(),
    });
    steps.push(Step {
        name: "service",
        command: "/bin/service --policy conservative-hard --seconds 1 --json --out /tmp/service"
            .into(),
    });
    steps
}
