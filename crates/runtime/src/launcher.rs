//! Pools that share a machine with other ranks of an MPI job: the launcher's
//! local rank and local size, read from the environment ([`launcher_ranks`]), and the
//! share of the process's allowed CPUs that a rank takes ([`split_cpus`]).
//!
//! A launcher that binds its ranks (`mpirun --bind-to core`, `srun --cpu-bind`) gives each
//! one a strict subset of the machine's CPUs: the pool uses it as it is. A rank it did not
//! bind (`--bind-to none`, `--oversubscribe`) is allowed every CPU the cgroup allows, as
//! are the other ranks on the machine: then the ranks split those CPUs among themselves by
//! local rank, each taking a contiguous, node-ordered share, so that no two ranks pin a
//! worker to the same CPU ([`LocalRanks::Auto`], the builder's default).
//!
//! The environment variables read, in this order (the first source whose two variables
//! are both set is used; a source with one of its two variables set is ignored):
//!
//! | Launcher | Local rank | Local size |
//! |---|---|---|
//! | Open MPI (`mpirun`, `prterun`) | `OMPI_COMM_WORLD_LOCAL_RANK` | `OMPI_COMM_WORLD_LOCAL_SIZE` |
//! | MPICH / Intel MPI (Hydra) | `MPI_LOCALRANKID` | `MPI_LOCALNRANKS` |
//! | PMI (PMIx, Cray PMI) | `PMI_LOCAL_RANK` | `PMI_LOCAL_SIZE` |
//! | Slurm (`srun`) | `SLURM_LOCALID` | `SLURM_NTASKS_PER_NODE` |
//!
//! Slurm's `SLURM_NTASKS_PER_NODE` is used only when it is a plain number (`4`): where the
//! nodes have different task counts Slurm writes a list (`2(x3),1`), which does not say
//! this node's count, and Slurm is then not a source. No variable set means no launcher.
//! A variable that is set but malformed (not a number, a rank not below the size, a size of
//! 0) is a [`LauncherError`] naming the variable and its value, never a silent default.

use crate::error::LauncherError;

/// The environment variables of each launcher: (local rank, local size), in the order
/// they are read.
pub const LAUNCHER_VARS: &[(&str, &str)] = &[
    ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"),
    ("SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
];

/// How a pool built inside one rank of a multi-rank job on this machine chooses its CPUs
/// ([`ThreadPoolBuilder::local_ranks`](crate::ThreadPoolBuilder::local_ranks)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalRanks {
    /// From the environment ([`launcher_ranks`]): where the launcher says there are several
    /// ranks on this machine and did not bind this one (its allowed CPUs are every online
    /// CPU its cgroup allows), take this rank's share ([`split_cpus`]); a bound rank uses
    /// its CPUs as they are. No launcher variable: nothing changes. The default.
    #[default]
    Auto,
    /// Use every allowed CPU whatever the environment says.
    Ignore,
    /// This rank is `rank` of `size` on this machine (an MPI program that knows its
    /// shared-memory communicator): take its share of the allowed CPUs, bound or not.
    Split {
        /// This process's rank among those on this machine, below `size`.
        rank: usize,
        /// How many ranks share this machine, at least 1.
        size: usize,
    },
}

/// Where a pool's rank share came from ([`LocalShare::source`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum ShareSource {
    /// No launcher, ignored ([`LocalRanks::Ignore`]), or a pool that does not run on this
    /// machine's CPUs (virtual, or given its [`worker_cpus`](crate::ThreadPoolBuilder::worker_cpus)).
    #[default]
    None,
    /// [`LocalRanks::Split`].
    Explicit,
    /// The launcher's environment: the local-rank variable read (e.g.
    /// `OMPI_COMM_WORLD_LOCAL_RANK`).
    Env(&'static str),
}

/// The launcher's view of this process: its rank among the ranks on this machine, read
/// from the environment ([`launcher_ranks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LauncherRanks {
    /// This process's local rank, below `size`.
    pub rank: usize,
    /// How many ranks run on this machine, at least 1.
    pub size: usize,
    /// The variable the rank was read from.
    pub rank_var: &'static str,
    /// The variable the size was read from.
    pub size_var: &'static str,
}

/// The share of the machine a pool took as one of several ranks on it
/// ([`ThreadPool::local_share`](crate::ThreadPool::local_share),
/// [`PoolMetrics::local_share`](crate::PoolMetrics::local_share)). The default is "no
/// launcher": rank 0 of 1, source [`ShareSource::None`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LocalShare {
    /// This process's rank on this machine (0 without a launcher).
    pub local_rank: usize,
    /// How many ranks run on this machine (1 without a launcher).
    pub local_ranks: usize,
    /// Where `local_rank` and `local_ranks` came from.
    pub source: ShareSource,
    /// Whether the pool took its share of the allowed CPUs ([`split_cpus`]): `false` for a
    /// single rank, and for a rank the launcher bound (its CPUs are used as they are).
    pub split: bool,
    /// Whether there are more ranks than allowed CPUs, so that ranks share CPUs (each rank
    /// takes one, round-robin).
    pub oversubscribed: bool,
    /// The CPUs (OS indexes) of the share taken; empty when `split` is `false`.
    pub cpus: Vec<u32>,
}

impl Default for LocalShare {
    fn default() -> Self {
        Self {
            local_rank: 0,
            local_ranks: 1,
            source: ShareSource::None,
            split: false,
            oversubscribed: false,
            cpus: Vec::new(),
        }
    }
}

/// The launcher's local rank and size, read through `lookup` (a variable's value, `None`
/// when unset): `Ok(None)` when no launcher variable pair is set. The sources and their
/// order are in [`LAUNCHER_VARS`] (in the order they are tried).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::launcher_ranks;
/// let env = |v: &str| match v {
///     "OMPI_COMM_WORLD_LOCAL_RANK" => Some("1".to_owned()),
///     "OMPI_COMM_WORLD_LOCAL_SIZE" => Some("4".to_owned()),
///     _ => None,
/// };
/// let r = launcher_ranks(env).unwrap().unwrap();
/// assert_eq!((r.rank, r.size), (1, 4));
/// assert_eq!(launcher_ranks(|_| None).unwrap(), None);
/// ```
///
/// # Errors
/// A [`LauncherError`] naming the variable and its value when the first source set is
/// malformed: not a number, a size of 0, a rank not below the size.
pub fn launcher_ranks(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<LauncherRanks>, LauncherError> {
    for &(rank_var, size_var) in LAUNCHER_VARS {
        let (Some(rank), Some(size)) = (lookup(rank_var), lookup(size_var)) else {
            continue;
        };
        if size_var == "SLURM_NTASKS_PER_NODE" && !is_plain_number(&size) {
            continue;
        }
        let size_n = parse(size_var, &size)?;
        if size_n == 0 {
            return Err(LauncherError::ZeroSize {
                var: size_var,
                value: size,
            });
        }
        let rank_n = parse(rank_var, &rank)?;
        if rank_n >= size_n {
            return Err(LauncherError::RankOutOfRange {
                var: rank_var,
                value: rank,
                size_var,
                size: size_n,
            });
        }
        return Ok(Some(LauncherRanks {
            rank: rank_n,
            size: size_n,
            rank_var,
            size_var,
        }));
    }
    Ok(None)
}

/// [`launcher_ranks`] over this process's environment.
///
/// # Errors
/// As [`launcher_ranks`].
pub fn launcher_ranks_from_env() -> Result<Option<LauncherRanks>, LauncherError> {
    launcher_ranks(|v| std::env::var(v).ok())
}

fn is_plain_number(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

fn parse(var: &'static str, value: &str) -> Result<usize, LauncherError> {
    value
        .trim()
        .parse::<usize>()
        .map_err(|_| LauncherError::NotANumber {
            var,
            value: value.to_owned(),
        })
}

/// Rank `rank` of `size`'s share of `cpus` (the allowed CPUs, ordered by node, then CPU),
/// and whether the ranks oversubscribe them. With `n = cpus.len()` and `size <= n`: the
/// contiguous share `cpus[rank*n/size .. (rank+1)*n/size]`, so that the shares of all ranks
/// are disjoint, non-empty, cover `cpus` and differ in size by at most one. With
/// `size > n`: the one CPU `cpus[rank % n]` (ranks share CPUs round-robin), and `true`.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::split_cpus;
/// assert_eq!(split_cpus(&[0, 1, 2, 3, 4], 1, 2).unwrap(), (vec![2, 3, 4], false));
/// assert_eq!(split_cpus(&[0, 1], 2, 3).unwrap(), (vec![0], true));
/// ```
///
/// # Errors
/// [`LauncherError::BadSplit`] when `size` is 0, `rank >= size` or `cpus` is empty.
pub fn split_cpus(
    cpus: &[u32],
    rank: usize,
    size: usize,
) -> Result<(Vec<u32>, bool), LauncherError> {
    let n = cpus.len();
    if size == 0 || rank >= size || n == 0 {
        return Err(LauncherError::BadSplit {
            rank,
            size,
            cpus: n,
        });
    }
    if size > n {
        return Ok((vec![cpus[rank % n]], true));
    }
    // rank < size <= n: the products fit where n * size does (n is a CPU count).
    let lo = rank * n / size;
    let hi = (rank + 1) * n / size;
    Ok((cpus[lo..hi].to_vec(), false))
}

/// Whether a process allowed the CPUs `allowed` on this machine was left unbound by its
/// launcher: [`is_unbound`] over this machine's online CPUs and its cgroup cpuset
/// ([`zonal_topology::cgroup_cpus`]), read now.
///
/// # Errors
/// [`TopologyError`](zonal_topology::TopologyError) when this machine's CPUs cannot be read.
pub fn is_unbound_here(allowed: &[u32]) -> Result<bool, zonal_topology::TopologyError> {
    let online: Vec<u32> = zonal_topology::this_machine_unrestricted()?
        .cpus()
        .iter()
        .map(|c| c.os_index)
        .collect();
    let cgroup = zonal_topology::cgroup_cpus();
    Ok(is_unbound(allowed, &online, cgroup.as_deref()))
}

/// Whether a process whose CPUs are `allowed` was left unbound by its launcher: it may run
/// on every one of the machine's `online` CPUs that its cgroup allows (`cgroup`, `None`
/// where no cpuset is known: every online CPU). A bound rank has a strict subset.
#[must_use]
pub fn is_unbound(allowed: &[u32], online: &[u32], cgroup: Option<&[u32]>) -> bool {
    let mut all: Vec<u32> = online
        .iter()
        .copied()
        .filter(|c| cgroup.is_none_or(|g| g.contains(c)))
        .collect();
    all.sort_unstable();
    let mut a = allowed.to_vec();
    a.sort_unstable();
    a.dedup();
    a == all
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |v| {
            pairs
                .iter()
                .find(|(k, _)| *k == v)
                .map(|(_, x)| (*x).to_owned())
        }
    }

    #[test]
    fn no_variables_is_no_launcher() {
        assert_eq!(launcher_ranks(|_| None).unwrap(), None);
    }

    #[test]
    fn each_launcher_is_read() {
        for &(r, s) in LAUNCHER_VARS {
            let got = launcher_ranks(env(&[(r, "2"), (s, "3")])).unwrap().unwrap();
            assert_eq!(
                got,
                LauncherRanks {
                    rank: 2,
                    size: 3,
                    rank_var: r,
                    size_var: s
                }
            );
        }
    }

    #[test]
    fn open_mpi_comes_first_and_half_a_pair_is_ignored() {
        let got = launcher_ranks(env(&[
            ("PMI_LOCAL_RANK", "0"),
            ("PMI_LOCAL_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (got.rank, got.size, got.rank_var),
            (1, 4, "OMPI_COMM_WORLD_LOCAL_RANK")
        );
        let half = launcher_ranks(env(&[("MPI_LOCALRANKID", "1")])).unwrap();
        assert_eq!(half, None);
    }

    #[test]
    fn slurm_counts_only_as_a_plain_number() {
        for list in ["2(x3)", "2,1", "2(x2),1"] {
            let got = launcher_ranks(env(&[
                ("SLURM_LOCALID", "0"),
                ("SLURM_NTASKS_PER_NODE", list),
            ]))
            .unwrap();
            assert_eq!(got, None, "{list}");
        }
        let got = launcher_ranks(env(&[
            ("SLURM_LOCALID", "1"),
            ("SLURM_NTASKS_PER_NODE", "2"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((got.rank, got.size), (1, 2));
    }

    #[test]
    fn malformed_values_are_errors_naming_the_variable_and_value() {
        // (variables, the variable at fault, its value)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case<'_>] = &[
            (
                &[
                    ("OMPI_COMM_WORLD_LOCAL_RANK", "one"),
                    ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
                ],
                "OMPI_COMM_WORLD_LOCAL_RANK",
                "one",
            ),
            (
                &[("MPI_LOCALRANKID", "0"), ("MPI_LOCALNRANKS", "-2")],
                "MPI_LOCALNRANKS",
                "-2",
            ),
            (
                &[("PMI_LOCAL_RANK", "0"), ("PMI_LOCAL_SIZE", "0")],
                "PMI_LOCAL_SIZE",
                "0",
            ),
            (
                &[("PMI_LOCAL_RANK", "2"), ("PMI_LOCAL_SIZE", "2")],
                "PMI_LOCAL_RANK",
                "2",
            ),
            (
                &[("SLURM_LOCALID", "x"), ("SLURM_NTASKS_PER_NODE", "4")],
                "SLURM_LOCALID",
                "x",
            ),
            (
                &[("SLURM_LOCALID", "0"), ("SLURM_NTASKS_PER_NODE", "0")],
                "SLURM_NTASKS_PER_NODE",
                "0",
            ),
        ];
        for (vars, var, value) in cases {
            let e = launcher_ranks(env(vars)).unwrap_err();
            assert_eq!(e.var(), Some(*var), "{e}");
            let text = e.to_string();
            assert!(
                text.contains(var) && text.contains(&format!("{value:?}")),
                "{text}"
            );
        }
    }

    #[test]
    fn bad_splits_are_errors() {
        assert!(split_cpus(&[0, 1], 0, 0).is_err());
        assert!(split_cpus(&[0, 1], 2, 2).is_err());
        assert!(split_cpus(&[], 0, 1).is_err());
    }

    #[test]
    fn a_rank_is_unbound_when_it_has_every_cpu_its_cgroup_allows() {
        assert!(is_unbound(&[0, 1, 2, 3], &[0, 1, 2, 3], None));
        assert!(!is_unbound(&[1], &[0, 1, 2, 3], None));
        assert!(is_unbound(&[2, 3], &[0, 1, 2, 3], Some(&[2, 3])));
        assert!(!is_unbound(&[2], &[0, 1, 2, 3], Some(&[2, 3])));
    }

    proptest! {
        #[test]
        fn shares_cover_the_cpus_exactly_once(n in 1usize..70, size in 1usize..70) {
            prop_assume!(size <= n);
            // Node order: any ascending list stands for it.
            let cpus: Vec<u32> = (0..n as u32).map(|c| c * 2 + 1).collect();
            let mut union = Vec::new();
            let mut lens = Vec::new();
            for r in 0..size {
                let (share, over) = split_cpus(&cpus, r, size).unwrap();
                prop_assert!(!over);
                prop_assert!(!share.is_empty());
                // Contiguous in node order: a window of `cpus`.
                let start = cpus.iter().position(|&c| c == share[0]).unwrap();
                prop_assert_eq!(&cpus[start..start + share.len()], &share[..]);
                lens.push(share.len());
                union.extend(share);
            }
            prop_assert_eq!(&union, &cpus, "disjoint, in order, covering");
            let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
            prop_assert!(hi - lo <= 1);
        }

        #[test]
        fn more_ranks_than_cpus_share_them_round_robin(n in 1usize..10, extra in 1usize..20, r in 0usize..30) {
            let size = n + extra;
            let rank = r % size;
            let cpus: Vec<u32> = (0..n as u32).collect();
            let (share, over) = split_cpus(&cpus, rank, size).unwrap();
            prop_assert!(over);
            prop_assert_eq!(share, vec![cpus[rank % n]]);
        }
    }
}
