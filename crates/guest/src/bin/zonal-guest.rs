//! Boots a NUMA guest shaped like a topology source and runs a job in it.
//!
//! ```text
//! zonal-guest (--preset NAME | --xml FILE | --nodes FILE.json) [--cpus-per-node N]
//!     [--mem-per-node MIB] [--bin HOST_PATH[:GUEST_PATH]]... [--job SCRIPT_FILE | --run 'LINE']
//!     [--timeout SECS] [--append 'KERNEL ARGS']
//! ```
//!
//! Prints the job's output and exits with the job's exit code; 2 on a usage or input error
//! (the typed error is printed), 1 when the guest failed to boot or finish.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use zonal_guest::{find_busybox, CpuCount, Guest, GuestError, GuestSpec, Initramfs, Shape};

/// Boot Linux under QEMU (TCG) as a NUMA machine shaped like a topology source and run a job.
#[derive(Debug, Parser)]
#[command(name = "zonal-guest", version)]
#[command(group(ArgGroup::new("source").args(["preset", "xml", "nodes"]).required(true)))]
#[command(group(ArgGroup::new("what").args(["job", "run"])))]
struct Args {
    /// One of Zonal's presets (s1, s2, s3).
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// An hwloc XML export.
    #[arg(long, value_name = "FILE")]
    xml: Option<PathBuf>,
    /// A node dump (`--nodes` format of the topology example).
    #[arg(long, value_name = "FILE.json")]
    nodes: Option<PathBuf>,
    /// vCPUs per node with CPUs (at most; default: as the source).
    #[arg(long, value_name = "N")]
    cpus_per_node: Option<u32>,
    /// Memory per node in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    mem_per_node: u32,
    /// A binary to put in the guest with its shared libraries (default guest path:
    /// /bin/<file name>).
    #[arg(long = "bin", value_name = "HOST_PATH[:GUEST_PATH]")]
    bins: Vec<String>,
    /// A shell script to run in the guest.
    #[arg(long, value_name = "SCRIPT_FILE")]
    job: Option<PathBuf>,
    /// A shell line to run in the guest.
    #[arg(long, value_name = "LINE")]
    run: Option<String>,
    /// Seconds before the guest is killed.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    timeout: u64,
    /// Extra kernel command-line arguments.
    #[arg(long, value_name = "KERNEL ARGS", default_value = "")]
    append: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(e) => {
            eprintln!("zonal-guest: {e}");
            ExitCode::from(if e.is_input_error() { 2 } else { 1 })
        }
    }
}

fn run(args: &Args) -> Result<i32, GuestError> {
    let machine = match (&args.preset, &args.xml, &args.nodes) {
        (Some(name), _, _) => zonal_topology::presets::preset_machine(name)?,
        (None, Some(path), _) => zonal_topology::from_xml_file(path)?,
        (None, None, Some(path)) => zonal_topology::from_nodes_file(path)?,
        // clap requires one of the three; say so rather than panic.
        (None, None, None) => {
            return Err(GuestError::Report {
                message: "no topology source: give --preset, --xml or --nodes".into(),
            })
        }
    };
    let shape = Shape {
        cpus_per_node: args
            .cpus_per_node
            .map_or(CpuCount::AsSource, CpuCount::AtMost),
        memory_mib_per_node: args.mem_per_node,
    };
    let spec = GuestSpec::from_machine(&machine, &shape)?;
    let script = match (&args.job, &args.run) {
        (Some(path), _) => std::fs::read_to_string(path).map_err(|source| GuestError::Io {
            path: path.clone(),
            source,
        })?,
        (None, Some(line)) => line.clone(),
        (None, None) => String::new(),
    };
    let mut initramfs = Initramfs::new(&find_busybox()?)?.job(&script);
    for b in &args.bins {
        let (host, guest) = match b.split_once(':') {
            Some((h, g)) => (PathBuf::from(h), g.to_owned()),
            None => {
                let host = PathBuf::from(b);
                let name = host
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (host, format!("/bin/{name}"))
            }
        };
        initramfs = initramfs.binary(&host, &guest)?;
    }
    let guest = Guest::new(spec, initramfs)
        .timeout(Duration::from_secs(args.timeout))
        .kernel_args(&args.append);
    let run = guest.run()?;
    print!("{}", run.job_output);
    eprintln!(
        "zonal-guest: {} booted and ran in {:.1} s",
        guest.spec().name(),
        run.elapsed.as_secs_f64()
    );
    Ok(run.exit_code)
}
