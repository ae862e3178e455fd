//! How the example CLIs (`topology`, `paper`, `workload`) end: one path for every outcome.
//!
//! | outcome | exit status |
//! |---|---|
//! | success (also `--help`, `--version`, and a reader that closed stdout: `… \| head`) | 0 |
//! | usage or input error: a flag, a value out of range, a flag the mode does not take, an input file or policy that cannot be read | 2 |
//! | failure while running: output that cannot be written, a pool that cannot start its threads, work that cannot finish | 1 |
//!
//! clap's own usage errors already exit with 2. Everything else reaches [`finish`], which
//! prints `PROGRAM: error: MESSAGE` on stderr (the message names the flag or file and the
//! value) and returns the status. No path panics: a panic (status 101) is a bug.

use std::fmt::Display;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command, CommandFactory, FromArgMatches};
use std::io::Write as _;
use std::process::ExitCode;

/// Why a CLI stops before its work is done.
#[derive(Debug)]
pub enum Exit {
    /// Bad usage or input: status 2.
    Usage(String),
    /// A failure while running: status 1.
    Failure(String),
    /// The reader of stdout went away: stop quietly, status 0.
    Closed,
}

impl Exit {
    /// A usage or input error (status 2).
    pub fn usage(e: impl Display) -> Self {
        Exit::Usage(e.to_string())
    }

    /// A failure while running (status 1).
    pub fn failure(e: impl Display) -> Self {
        Exit::Failure(e.to_string())
    }
}

/// A CLI step's result.
pub type Result<T = ()> = std::result::Result<T, Exit>;

/// The one way out: prints the error, if any, and gives the exit status.
pub fn finish(program: &str, result: Result) -> ExitCode {
    match result {
        Ok(()) | Err(Exit::Closed) => ExitCode::SUCCESS,
        Err(Exit::Usage(msg)) => {
            eprintln!("{program}: error: {msg}");
            ExitCode::from(2)
        }
        Err(Exit::Failure(msg)) => {
            eprintln!("{program}: error: {msg}");
            ExitCode::from(1)
        }
    }
}

/// Writes `text` to stdout and flushes it; a closed pipe is [`Exit::Closed`], any other
/// write error a failure (where `println!` would panic).
///
/// # Errors
///
/// [`Exit::Closed`] when stdout's reader went away, [`Exit::Failure`] when it cannot be
/// written.
pub fn out(text: impl Display) -> Result {
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{text}")
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Exit::Closed,
            _ => Exit::failure(format!("cannot write to stdout: {e}")),
        })
}

/// Checks that a numeric flag lies in `lo..=hi` (and is finite), before anything is
/// allocated or run with it: a usage error naming the flag, the value and the range.
///
/// # Errors
///
/// [`Exit::Usage`] when `v` is outside `lo..=hi` (or NaN).
pub fn check_range<T: PartialOrd + Display + Copy>(flag: &str, v: T, lo: T, hi: T) -> Result {
    // `!(lo <= v && v <= hi)` also refuses NaN, which compares false with everything.
    if lo <= v && v <= hi {
        Ok(())
    } else {
        Err(Exit::Usage(format!(
            "{flag} {v} is out of range: expected {lo}..={hi}"
        )))
    }
}

/// Parses the command line into `A`, keeping the matches so that [`given`] can tell a flag
/// the user typed from a default. clap's own errors exit with status 2, `--help` with 0.
pub fn parse<A: CommandFactory + FromArgMatches>() -> (A, ArgMatches) {
    parse_with(A::command())
}

/// Parses like [`parse`], under the header the paired runners (`scaling`, `rayon_demo`) had
/// as examples of the facade package, kept as it was: the name `zonal` (what `--version`
/// prints, with this package's version) and the facade's description (what `--help` begins
/// with).
pub fn parse_as_facade<A: CommandFactory + FromArgMatches>() -> (A, ArgMatches) {
    parse_with(
        A::command()
            .name("zonal")
            .version(env!("CARGO_PKG_VERSION"))
            .about(FACADE_ABOUT),
    )
}

/// Parses the command line with `command` (`A`'s, perhaps adjusted) into `A`.
fn parse_with<A: FromArgMatches>(command: Command) -> (A, ArgMatches) {
    let matches = command.get_matches();
    match A::from_arg_matches(&matches) {
        Ok(args) => (args, matches),
        Err(e) => e.exit(),
    }
}

/// The facade package's description, the `--help` header of [`parse_as_facade`].
const FACADE_ABOUT: &str =
    "NUMA-aware work-stealing thread pool with conservative, zone-limited load balancing";

/// The flags of `ids` (clap ids: field names) that were typed on the command line.
pub fn given<'a>(matches: &ArgMatches, ids: &[&'a str]) -> Vec<&'a str> {
    ids.iter()
        .copied()
        .filter(|id| {
            matches!(
                matches
                    .try_get_raw(id)
                    .ok()
                    .flatten()
                    .and(matches.value_source(id)),
                Some(ValueSource::CommandLine)
            )
        })
        .collect()
}

/// Refuses the flags of `ids` that were typed although `mode` does not take them.
///
/// # Errors
///
/// [`Exit::Usage`] naming the first such flag.
pub fn refuse_given(matches: &ArgMatches, ids: &[&str], mode: &str) -> Result {
    match given(matches, ids).first() {
        None => Ok(()),
        Some(id) => Err(Exit::Usage(format!(
            "--{} does not apply to {mode}",
            id.replace('_', "-")
        ))),
    }
}
