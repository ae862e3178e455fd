//! Choosing a policy by name and parameters (serde: TOML and JSON): the crate's leaf layer.
//!
//! Every configuration type ([`PolicyConfig`], [`PolicyName`], [`OriginRule`],
//! [`LinuxEra`], [`ImbalanceRule`], [`PlacementMode`], [`Mechanism`]), the errors ([`PolicyError`]) and the range checks live here, and this file
//! imports nothing else of the crate. What needs the catalogue (names, parsing that checks a
//! policy accepts its fields, `build`) is written in `policies.rs`, the layer on top.

use std::fmt;
use std::str::FromStr;

/// `Display` and `FromStr` for a configuration enum with `ALL` and `as_str`: written and
/// read by its name; an unknown name is [`PolicyError::BadValue`] for `$field`, listing
/// every name in `ALL`'s order.
macro_rules! by_name {
    ($ty:ty, $field:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = PolicyError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| PolicyError::BadValue {
                        field: $field,
                        value: s.to_owned(),
                        expected: format!("one of {}", Self::ALL.map(Self::as_str).join(", ")),
                    })
            }
        }
    };
}

/// A policy's name: a row of the catalogue (`zonal_policy::catalogue()`). Parsing checks
/// the name against the catalogue, so a `PolicyName` always builds.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::PolicyName;
/// let n: PolicyName = "numalb".parse()?;
/// assert_eq!(n, PolicyName::NUMALB);
/// assert_eq!(n.as_str(), "numalb");
/// assert!("nope".parse::<PolicyName>().is_err());
/// # Ok::<(), zonal::policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicyName(pub(crate) u8);

/// How the origin-distance check treats tasks (docs/DESIGN.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum OriginRule {
    /// A task never moves farther from its origin than it already is (the default).
    #[default]
    NoFarther,
    /// The paper's literal text: `dist(origin, thief) ≤ dist(origin, victim)` for every task,
    /// which keeps tasks at home on their birth node.
    Strict,
    /// No origin check.
    Off,
}

impl OriginRule {
    /// Every rule, in the order `--help` lists them.
    pub const ALL: [OriginRule; 3] = [OriginRule::Strict, OriginRule::NoFarther, OriginRule::Off];

    /// The name used in configs and on command lines.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            OriginRule::NoFarther => "no-farther",
            OriginRule::Strict => "strict",
            OriginRule::Off => "off",
        }
    }
}

by_name!(OriginRule, "origin");

/// Errors choosing or configuring a policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// No policy has this name.
    #[error("unknown policy {name:?}; valid policies: {valid}")]
    UnknownPolicy {
        /// The name asked for.
        name: String,
        /// The valid names.
        valid: String,
    },
    /// A parameter is out of range.
    #[error("bad value {value:?} for {field}: expected {expected}")]
    BadValue {
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A parameter is set that the policy does not take (its catalogue row's `accepts`):
    /// refused rather than ignored.
    #[error("{field} = {value} is not a parameter of policy {policy}; it accepts: {accepts}")]
    NotAccepted {
        /// The parameter.
        field: ConfigField,
        /// The value given.
        value: String,
        /// The policy.
        policy: PolicyName,
        /// The parameters the policy takes.
        accepts: Fields,
    },
    /// A TOML config did not parse.
    #[cfg(feature = "config")]
    #[error("malformed TOML policy config: {0}")]
    Toml(#[from] toml::de::Error),
    /// A JSON config did not parse.
    #[cfg(feature = "config")]
    #[error("malformed JSON policy config: {0}")]
    Json(#[from] serde_json::Error),
    /// A JSON config repeats a key in one object (serde_json would keep the last one
    /// silently). Checked at every nesting level before the config is read; TOML refuses
    /// repeated keys itself (`PolicyError::Toml`, feature `config`).
    #[error(
        "JSON policy config: key {key:?} appears twice in {} (line {line}, column {column})",
        object_at(.path)
    )]
    DuplicateKey {
        /// Where the object sits in the document (`a.b[2]`; empty for the top level).
        path: String,
        /// The repeated key.
        key: String,
        /// The 1-based line of its second occurrence.
        line: usize,
        /// The column just past it.
        column: usize,
    },
}

/// `the object at a.b`, or `the top-level object` for an empty path.
fn object_at(path: &str) -> String {
    if path.is_empty() {
        "the top-level object".to_owned()
    } else {
        format!("the object at {path}")
    }
}

/// A policy by name plus its parameters. Unset parameters take the documented defaults; a
/// parameter set for a policy that does not take it (its catalogue row's `accepts`) is
/// refused when the config is read or built ([`PolicyError::NotAccepted`]).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct PolicyConfig {
    /// Which policy.
    pub name: PolicyName,
    /// Origin rule (conservative policies, and composed filters: only with
    /// `conservative_filters = true`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub origin: OriginRule,
    /// Migrations after which a task is aged (conservative policies and composed filters;
    /// default `DEFAULT_AGE_LIMIT` = 3; must be ≥ 1).
    #[cfg_attr(feature = "serde", serde(default))]
    pub age_limit: Option<u32>,
    /// Imbalance threshold at NUMA levels (≥ II), percent (Linux `imbalance_pct − 100`;
    /// default 25 as in the paper; at most 1000). Level I always uses 17.
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_imbalance_pct: Option<u32>,
    /// NUMALB's communication weight `a` (default
    /// `DEFAULT_NUMALB_ALPHA` = 1; finite, ≥ 0).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numalb_alpha: Option<f64>,
    /// Compose the conservative filters (hard zone, `origin`, `age_limit`) with another
    /// policy's selection: accepted by `thread-aware`, `numalb` and `average-weight`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub conservative_filters: Option<bool>,
    /// The kernel the Linux walk imitates (`linux`, the conservative policies,
    /// `thread-aware`, and the new-idle and fork placement of `numalb` and
    /// `average-weight`; `unrestricted` accepts it as a label only): `"modern"` (the
    /// default) or `"2.6"`, the paper's kernel ([`LinuxEra`]). Any other value is refused
    /// naming it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub linux_era: LinuxEra,
    /// How the 2.6 era decides that a domain is imbalanced and how much to move
    /// ([`ImbalanceRule`]): `"kernel"` (the default: 2.6.18's `find_busiest_group`
    /// arithmetic) or `"threshold"` (the paper's description of its Linux: move toward the
    /// domain average whenever the busiest group exceeds ours by the imbalance threshold).
    /// Read by every policy on the Linux walk; `"threshold"` needs `linux_era = "2.6"`
    /// (refused, naming the field, with the modern era). Any other value is refused naming it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub imbalance_rule: ImbalanceRule,
    /// Where the conservative filter applies ([`PlacementMode`]): `"zone"` (the default:
    /// fork placement and new-idle balancing stay inside the zone too) or `"paper"` (only
    /// the periodic balancer and the steal side are restricted; fork placement and new-idle
    /// balancing are the `linux` policy's of the same era, as the paper's "usual manner").
    /// Accepted by the conservative policies, and by `thread-aware`, `numalb` and
    /// `average-weight` with `conservative_filters = true` (the composed filter restricts
    /// their placement and new-idle balancing the same way). Any other value is refused
    /// naming it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub placement: PlacementMode,
    /// Linux's automatic NUMA balancing (`kernel.numa_balancing`,
    /// `NumaBalancing`): a task's pages follow it to the node it runs
    /// on, at its scans. Default off; accepted for `linux` and `thread-aware` of the modern
    /// era only (refused, naming the field, with `linux_era = "2.6"` or another policy).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_balancing: bool,
    /// `numa_balancing_scan_delay_ms` (default 1000; 1..=3600000; only with
    /// `numa_balancing`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_scan_delay_ms: Option<u32>,
    /// `numa_balancing_scan_period_min_ms` (default 1000; 1..=3600000; only with
    /// `numa_balancing`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_scan_period_min_ms: Option<u32>,
    /// Ablation ([`Mechanism::ZonePeriodic`]): `linux` with its periodic balancer behind
    /// the hard zone and nothing else of the conservative policies. Default off; accepted
    /// by `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub zone_periodic: bool,
    /// Ablation ([`Mechanism::OriginCheck`]): `linux` with the origin check
    /// (`no-farther`) on its periodic balancer and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub origin_check: bool,
    /// Ablation ([`Mechanism::Ageing`]): `linux` with ageing (after `DEFAULT_AGE_LIMIT`
    /// migrations) on its periodic balancer and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub ageing: bool,
    /// Ablation ([`Mechanism::PlacementRule`]): `linux` with the soft zone's 150% rule at
    /// fork placement (`soft_may_leave`) and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub placement_rule: bool,
    /// Ablation ([`Mechanism::NewIdleZone`]): `linux` with new-idle balancing kept inside
    /// the hard zone and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub newidle_zone: bool,
    /// Ablation ([`Mechanism::ForkZone`]): `linux` with fork placement inside the hard zone
    /// (the zone of the parent's node as the forked task's affinity mask, as
    /// `conservative-hard` places) and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub fork_zone: bool,
    /// Ablation ([`Mechanism::WakeZone`]): `linux` with wake-up placement inside the hard
    /// zone (the zone of the task's origin as its affinity mask at wake-up, as the
    /// conservative policies wake) and nothing else. Default off; `linux` only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_false"))]
    pub wake_zone: bool,
}

/// `serde`'s `skip_serializing_if` for the ablation switches: written only when on.
#[cfg(feature = "serde")]
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// One mechanism of the conservative policies, switched on alone on top of `linux` for the
/// ablation (each is a `bool` field of [`PolicyConfig`], accepted by `linux` only; several
/// may be on together).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{Mechanism, PolicyConfig, PolicyName};
/// let cfg = PolicyConfig::new(PolicyName::LINUX).with_mechanism(Mechanism::OriginCheck);
/// assert!(cfg.origin_check && cfg.build().is_ok());
/// assert_eq!(cfg.mechanisms().collect::<Vec<_>>(), [Mechanism::OriginCheck]);
/// let soft = PolicyConfig::new(PolicyName::CONSERVATIVE_SOFT).with_mechanism(Mechanism::Ageing);
/// assert!(soft.build().is_err()); // PolicyError::NotAccepted
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Mechanism {
    /// The hard zone on the periodic balancer (`zone_periodic`): its walk stops at level S
    /// and no move leaves the zone; steal side alike. Fork, new-idle and wake-up placement
    /// stay `linux`'s.
    ZonePeriodic,
    /// The origin check on the periodic balancer (`origin_check`): `no-farther`, the
    /// origin inside the thief's zone, no zone of its own.
    OriginCheck,
    /// Ageing on the periodic balancer (`ageing`): a task that migrated
    /// `DEFAULT_AGE_LIMIT` times never moves again (and, in the simulator, its pages follow).
    Ageing,
    /// The soft zone's 150% rule at fork placement (`placement_rule`, `soft_may_leave`): a
    /// fork leaves the zone only from a local group loaded above 150% of the target's.
    PlacementRule,
    /// New-idle balancing inside the hard zone (`newidle_zone`).
    NewIdleZone,
    /// Fork placement inside the hard zone (`fork_zone`): the zone of the parent's node is
    /// the forked task's affinity mask, as under `conservative-hard`.
    ForkZone,
    /// Wake-up placement inside the hard zone (`wake_zone`): a waking task is placed as
    /// the conservative policies place it, behind the hard zone of its origin.
    WakeZone,
}

impl Mechanism {
    /// Every mechanism, in [`PolicyConfig`]'s field order.
    pub const ALL: [Mechanism; 7] = [
        Mechanism::ZonePeriodic,
        Mechanism::OriginCheck,
        Mechanism::Ageing,
        Mechanism::PlacementRule,
        Mechanism::NewIdleZone,
        Mechanism::ForkZone,
        Mechanism::WakeZone,
    ];

    /// The config fields of every mechanism ([`Mechanism::field`] of [`Mechanism::ALL`]).
    pub const FIELDS: Fields = {
        let mut fields = Fields::EMPTY;
        let mut i = 0;
        while i < Mechanism::ALL.len() {
            fields = fields.with(Mechanism::ALL[i].field());
            i += 1;
        }
        fields
    };

    /// Its config field.
    #[must_use]
    pub const fn field(self) -> ConfigField {
        match self {
            Mechanism::ZonePeriodic => ConfigField::ZonePeriodic,
            Mechanism::OriginCheck => ConfigField::OriginCheck,
            Mechanism::Ageing => ConfigField::Ageing,
            Mechanism::PlacementRule => ConfigField::PlacementRule,
            Mechanism::NewIdleZone => ConfigField::NewIdleZone,
            Mechanism::ForkZone => ConfigField::ForkZone,
            Mechanism::WakeZone => ConfigField::WakeZone,
        }
    }

    /// The config key (the field's name).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        self.field().as_str()
    }

    /// A few words for reports.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Mechanism::ZonePeriodic => "the hard zone on periodic balancing",
            Mechanism::OriginCheck => "the origin check",
            Mechanism::Ageing => "ageing",
            Mechanism::PlacementRule => "the soft zone's 150% placement rule",
            Mechanism::NewIdleZone => "new-idle balancing inside the zone",
            Mechanism::ForkZone => "fork placement inside the hard zone",
            Mechanism::WakeZone => "wake-up placement inside the hard zone",
        }
    }

    /// The switch in `cfg`.
    fn switch(self, cfg: &mut PolicyConfig) -> &mut bool {
        match self {
            Mechanism::ZonePeriodic => &mut cfg.zone_periodic,
            Mechanism::OriginCheck => &mut cfg.origin_check,
            Mechanism::Ageing => &mut cfg.ageing,
            Mechanism::PlacementRule => &mut cfg.placement_rule,
            Mechanism::NewIdleZone => &mut cfg.newidle_zone,
            Mechanism::ForkZone => &mut cfg.fork_zone,
            Mechanism::WakeZone => &mut cfg.wake_zone,
        }
    }

    /// Whether `cfg` switches it on.
    #[must_use]
    pub fn is_on(self, cfg: &PolicyConfig) -> bool {
        match self {
            Mechanism::ZonePeriodic => cfg.zone_periodic,
            Mechanism::OriginCheck => cfg.origin_check,
            Mechanism::Ageing => cfg.ageing,
            Mechanism::PlacementRule => cfg.placement_rule,
            Mechanism::NewIdleZone => cfg.newidle_zone,
            Mechanism::ForkZone => cfg.fork_zone,
            Mechanism::WakeZone => cfg.wake_zone,
        }
    }
}

by_name!(Mechanism, "mechanism");

impl PolicyConfig {
    /// A policy with default parameters.
    #[must_use]
    pub fn new(name: PolicyName) -> Self {
        Self {
            name,
            origin: OriginRule::default(),
            age_limit: None,
            numa_imbalance_pct: None,
            numalb_alpha: None,
            conservative_filters: None,
            linux_era: LinuxEra::Modern,
            imbalance_rule: ImbalanceRule::Kernel,
            placement: PlacementMode::Zone,
            numa_balancing: false,
            numa_scan_delay_ms: None,
            numa_scan_period_min_ms: None,
            zone_periodic: false,
            origin_check: false,
            ageing: false,
            placement_rule: false,
            newidle_zone: false,
            fork_zone: false,
            wake_zone: false,
        }
    }

    /// This config with mechanism `m` switched on (the ablation; `linux` only).
    #[must_use]
    pub fn with_mechanism(mut self, m: Mechanism) -> Self {
        *m.switch(&mut self) = true;
        self
    }

    /// The mechanisms this config switches on, in [`Mechanism::ALL`]'s order.
    pub fn mechanisms(&self) -> impl Iterator<Item = Mechanism> + '_ {
        Mechanism::ALL.into_iter().filter(|m| m.is_on(self))
    }
}

/// An optional field of [`PolicyConfig`]: every field but `name`. A policy's catalogue row
/// says which of them it takes (`PolicyEntry::accepts`); a config that sets another is
/// refused ([`PolicyError::NotAccepted`]).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{ConfigField, PolicyConfig, PolicyName};
/// let mut cfg = PolicyConfig::new(PolicyName::NUMALB);
/// cfg.numalb_alpha = Some(2.0);
/// assert_eq!(cfg.fields_set().iter().collect::<Vec<_>>(), [ConfigField::NumalbAlpha]);
/// assert_eq!(ConfigField::NumalbAlpha.as_str(), "numalb_alpha");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ConfigField {
    /// `origin`.
    Origin,
    /// `age_limit`.
    AgeLimit,
    /// `numa_imbalance_pct`.
    NumaImbalancePct,
    /// `numalb_alpha`.
    NumalbAlpha,
    /// `conservative_filters`.
    ConservativeFilters,
    /// `linux_era`.
    LinuxEra,
    /// `imbalance_rule`.
    ImbalanceRule,
    /// `placement`.
    Placement,
    /// `numa_balancing`.
    NumaBalancing,
    /// `numa_scan_delay_ms`.
    NumaScanDelayMs,
    /// `numa_scan_period_min_ms`.
    NumaScanPeriodMinMs,
    /// `zone_periodic`.
    ZonePeriodic,
    /// `origin_check`.
    OriginCheck,
    /// `ageing`.
    Ageing,
    /// `placement_rule`.
    PlacementRule,
    /// `newidle_zone`.
    NewIdleZone,
    /// `fork_zone`.
    ForkZone,
    /// `wake_zone`.
    WakeZone,
}

impl ConfigField {
    /// Every field, in [`PolicyConfig`]'s order.
    pub const ALL: [ConfigField; 18] = [
        ConfigField::Origin,
        ConfigField::AgeLimit,
        ConfigField::NumaImbalancePct,
        ConfigField::NumalbAlpha,
        ConfigField::ConservativeFilters,
        ConfigField::LinuxEra,
        ConfigField::ImbalanceRule,
        ConfigField::Placement,
        ConfigField::NumaBalancing,
        ConfigField::NumaScanDelayMs,
        ConfigField::NumaScanPeriodMinMs,
        ConfigField::ZonePeriodic,
        ConfigField::OriginCheck,
        ConfigField::Ageing,
        ConfigField::PlacementRule,
        ConfigField::NewIdleZone,
        ConfigField::ForkZone,
        ConfigField::WakeZone,
    ];

    /// The name used in configs (TOML and JSON keys).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ConfigField::Origin => "origin",
            ConfigField::AgeLimit => "age_limit",
            ConfigField::NumaImbalancePct => "numa_imbalance_pct",
            ConfigField::NumalbAlpha => "numalb_alpha",
            ConfigField::ConservativeFilters => "conservative_filters",
            ConfigField::LinuxEra => "linux_era",
            ConfigField::ImbalanceRule => "imbalance_rule",
            ConfigField::Placement => "placement",
            ConfigField::NumaBalancing => "numa_balancing",
            ConfigField::NumaScanDelayMs => "numa_scan_delay_ms",
            ConfigField::NumaScanPeriodMinMs => "numa_scan_period_min_ms",
            ConfigField::ZonePeriodic => "zone_periodic",
            ConfigField::OriginCheck => "origin_check",
            ConfigField::Ageing => "ageing",
            ConfigField::PlacementRule => "placement_rule",
            ConfigField::NewIdleZone => "newidle_zone",
            ConfigField::ForkZone => "fork_zone",
            ConfigField::WakeZone => "wake_zone",
        }
    }

    /// The field's bit in [`Fields`].
    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for ConfigField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of [`ConfigField`]s (const-constructible): the fields a policy takes, or the ones
/// a config sets ([`PolicyConfig::fields_set`]).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{ConfigField, Fields};
/// const F: Fields = Fields::of(&[ConfigField::LinuxEra, ConfigField::AgeLimit]);
/// assert!(F.contains(ConfigField::AgeLimit) && !F.contains(ConfigField::Origin));
/// assert_eq!(F.to_string(), "age_limit, linux_era");
/// assert_eq!(Fields::EMPTY.to_string(), "none");
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Fields(u32);

impl Fields {
    /// No field.
    pub const EMPTY: Fields = Fields(0);

    /// The set of `fields`.
    #[must_use]
    pub const fn of(fields: &[ConfigField]) -> Self {
        let mut bits = 0;
        let mut i = 0;
        while i < fields.len() {
            bits |= fields[i].bit();
            i += 1;
        }
        Fields(bits)
    }

    /// This set and `field`.
    #[must_use]
    pub const fn with(self, field: ConfigField) -> Self {
        Fields(self.0 | field.bit())
    }

    /// Both sets.
    #[must_use]
    pub const fn union(self, other: Fields) -> Self {
        Fields(self.0 | other.0)
    }

    /// Whether `field` is in the set.
    #[must_use]
    pub const fn contains(self, field: ConfigField) -> bool {
        self.0 & field.bit() != 0
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fields, in [`ConfigField::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = ConfigField> + Clone {
        ConfigField::ALL
            .into_iter()
            .filter(move |&f| self.contains(f))
    }
}

impl fmt::Display for Fields {
    /// The names, comma-separated (`none` for the empty set).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, field) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(field.as_str())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl PolicyConfig {
    /// The fields this config sets: an `Option` field that is `Some`, `numa_balancing` and
    /// the ablation switches when `true`, and `origin`, `linux_era`, `imbalance_rule` and
    /// `placement` when not their defaults.
    #[must_use]
    pub fn fields_set(&self) -> Fields {
        ConfigField::ALL
            .into_iter()
            .filter(|&f| self.is_set(f))
            .fold(Fields::EMPTY, Fields::with)
    }

    /// Whether this config sets `field` ([`PolicyConfig::fields_set`]).
    fn is_set(&self, field: ConfigField) -> bool {
        match field {
            ConfigField::Origin => self.origin != OriginRule::default(),
            ConfigField::AgeLimit => self.age_limit.is_some(),
            ConfigField::NumaImbalancePct => self.numa_imbalance_pct.is_some(),
            ConfigField::NumalbAlpha => self.numalb_alpha.is_some(),
            ConfigField::ConservativeFilters => self.conservative_filters.is_some(),
            ConfigField::LinuxEra => self.linux_era != LinuxEra::default(),
            ConfigField::ImbalanceRule => self.imbalance_rule != ImbalanceRule::default(),
            ConfigField::Placement => self.placement != PlacementMode::default(),
            ConfigField::NumaBalancing => self.numa_balancing,
            ConfigField::NumaScanDelayMs => self.numa_scan_delay_ms.is_some(),
            ConfigField::NumaScanPeriodMinMs => self.numa_scan_period_min_ms.is_some(),
            ConfigField::ZonePeriodic => self.zone_periodic,
            ConfigField::OriginCheck => self.origin_check,
            ConfigField::Ageing => self.ageing,
            ConfigField::PlacementRule => self.placement_rule,
            ConfigField::NewIdleZone => self.newidle_zone,
            ConfigField::ForkZone => self.fork_zone,
            ConfigField::WakeZone => self.wake_zone,
        }
    }

    /// `field`'s value as a config writes it (for error messages).
    pub(crate) fn value_of(&self, field: ConfigField) -> String {
        fn opt<T: ToString>(v: Option<T>) -> String {
            v.map_or_else(|| "unset".to_owned(), |v| v.to_string())
        }
        match field {
            ConfigField::Origin => format!("{:?}", self.origin.as_str()),
            ConfigField::AgeLimit => opt(self.age_limit),
            ConfigField::NumaImbalancePct => opt(self.numa_imbalance_pct),
            ConfigField::NumalbAlpha => opt(self.numalb_alpha),
            ConfigField::ConservativeFilters => opt(self.conservative_filters),
            ConfigField::LinuxEra => format!("{:?}", self.linux_era.as_str()),
            ConfigField::ImbalanceRule => format!("{:?}", self.imbalance_rule.as_str()),
            ConfigField::Placement => format!("{:?}", self.placement.as_str()),
            ConfigField::NumaBalancing => self.numa_balancing.to_string(),
            ConfigField::NumaScanDelayMs => opt(self.numa_scan_delay_ms),
            ConfigField::NumaScanPeriodMinMs => opt(self.numa_scan_period_min_ms),
            ConfigField::ZonePeriodic => self.zone_periodic.to_string(),
            ConfigField::OriginCheck => self.origin_check.to_string(),
            ConfigField::Ageing => self.ageing.to_string(),
            ConfigField::PlacementRule => self.placement_rule.to_string(),
            ConfigField::NewIdleZone => self.newidle_zone.to_string(),
            ConfigField::ForkZone => self.fork_zone.to_string(),
            ConfigField::WakeZone => self.wake_zone.to_string(),
        }
    }

    /// [`PolicyError::NotAccepted`] for the first field this config sets outside `accepts`.
    pub(crate) fn check_accepted(&self, accepts: Fields) -> Result<(), PolicyError> {
        match self.fields_set().iter().find(|&f| !accepts.contains(f)) {
            Some(field) => Err(PolicyError::NotAccepted {
                field,
                value: self.value_of(field),
                policy: self.name,
                accepts,
            }),
            None => Ok(()),
        }
    }
}

/// The kernel the Linux baseline imitates.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::LinuxEra;
/// assert_eq!("2.6".parse::<LinuxEra>()?, LinuxEra::V2_6);
/// assert_eq!(LinuxEra::default(), LinuxEra::Modern);
/// assert!("2.4".parse::<LinuxEra>().is_err());
/// # Ok::<(), zonal::policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum LinuxEra {
    /// Linux ≥ 5.5 (docs/reference/linux-lb.md): the default.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "modern"))]
    Modern,
    /// The 2.6-era balancer of the paper's kernel (the Linux walk's `era` module).
    #[cfg_attr(feature = "serde", serde(rename = "2.6"))]
    V2_6,
}

impl LinuxEra {
    /// Every era, in the order `--help` lists them.
    pub const ALL: [LinuxEra; 2] = [LinuxEra::Modern, LinuxEra::V2_6];

    /// The name used in configs and on command lines.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            LinuxEra::Modern => "modern",
            LinuxEra::V2_6 => "2.6",
        }
    }
}

by_name!(LinuxEra, "linux_era");

/// How the Linux walk's 2.6 era finds an imbalance at a domain (config field
/// `imbalance_rule`; the paper example's `--imbalance-rule`).
///
/// The paper describes its simulated Linux's periodic balancing as a threshold test
/// ("thresholds 25%, or 12% in some cases"), not 2.6's arithmetic; its Table 1 counts
/// (`zonal-sim`'s `stats.rs`) are reproduced under that reading and not under the
/// kernel's. Both are written in the walk's `era` module.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::ImbalanceRule;
/// assert_eq!("threshold".parse::<ImbalanceRule>()?, ImbalanceRule::Threshold);
/// assert_eq!(ImbalanceRule::default(), ImbalanceRule::Kernel);
/// assert!("paper".parse::<ImbalanceRule>().is_err());
/// # Ok::<(), zonal::policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum ImbalanceRule {
    /// 2.6.18's `find_busiest_group`: the busiest group's excess over the domain average,
    /// `busiest_load_per_task`, and the small-imbalance arithmetic (`pwr_move`), which
    /// often decides that moving one task gains nothing (the default).
    #[default]
    Kernel,
    /// The paper's reading: past the imbalance threshold, move toward the domain average,
    /// at least one task.
    Threshold,
}

impl ImbalanceRule {
    /// Every rule, in the order `--help` lists them.
    pub const ALL: [ImbalanceRule; 2] = [ImbalanceRule::Kernel, ImbalanceRule::Threshold];

    /// The name used in configs and on command lines.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ImbalanceRule::Kernel => "kernel",
            ImbalanceRule::Threshold => "threshold",
        }
    }
}

by_name!(ImbalanceRule, "imbalance_rule");

/// Where the conservative filter restricts a policy built on the Linux walk (config field
/// `placement`; the paper example's `--placement`).
///
/// The paper restricts the periodic balancer and says idle and initial balancing are "done
/// in the usual manner". `Zone` (the default) also keeps fork placement and new-idle
/// balancing inside the zone (the hard zone as an affinity mask, the soft zone's 150% rule,
/// the origin check); `Paper` leaves those two exactly as the `linux` policy of the same era
/// decides them, and restricts only the periodic balancer and the steal side.
///
/// (Named `PlacementMode` because `Placement` is the fork-placement result type.)
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::PlacementMode;
/// assert_eq!("paper".parse::<PlacementMode>()?, PlacementMode::Paper);
/// assert_eq!(PlacementMode::default(), PlacementMode::Zone);
/// assert!("usual".parse::<PlacementMode>().is_err());
/// # Ok::<(), zonal::policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum PlacementMode {
    /// Fork placement and new-idle balancing stay inside the zone (the default).
    #[default]
    Zone,
    /// Fork placement and new-idle balancing as the `linux` policy of the same era; only
    /// the periodic balancer and the steal side are restricted.
    Paper,
}

impl PlacementMode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [PlacementMode; 2] = [PlacementMode::Zone, PlacementMode::Paper];

    /// The name used in configs and on command lines.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            PlacementMode::Zone => "zone",
            PlacementMode::Paper => "paper",
        }
    }
}

by_name!(PlacementMode, "placement");

/// The largest accepted `numa_imbalance_pct`.
pub(crate) const MAX_IMBALANCE_PCT: u32 = 1000;

/// [`PolicyError::BadValue`] for `field`.
pub(crate) fn bad(field: &'static str, value: impl ToString, expected: &str) -> PolicyError {
    PolicyError::BadValue {
        field,
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// The range checks of the parameters every policy reads: `age_limit` ≥ 1,
/// `numa_imbalance_pct` at most [`MAX_IMBALANCE_PCT`], `numalb_alpha` finite and ≥ 0.
pub(crate) fn check_ranges(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    if cfg.age_limit == Some(0) {
        return Err(bad("age_limit", 0, "an integer ≥ 1"));
    }
    if let Some(p) = cfg.numa_imbalance_pct {
        if p > MAX_IMBALANCE_PCT {
            return Err(bad("numa_imbalance_pct", p, "a percentage in 0..=1000"));
        }
    }
    if cfg.imbalance_rule == ImbalanceRule::Threshold && cfg.linux_era != LinuxEra::V2_6 {
        return Err(bad(
            "imbalance_rule",
            cfg.imbalance_rule,
            "\"kernel\" with linux_era \"modern\" (the threshold rule replaces the 2.6 era's \
             arithmetic)",
        ));
    }
    if let Some(a) = cfg.numalb_alpha {
        if !a.is_finite() || a < 0.0 {
            return Err(bad("numalb_alpha", a, "a finite number ≥ 0"));
        }
    }
    Ok(())
}

/// The largest accepted sysctl value, ms (one hour).
pub const MAX_SYSCTL_MS: u32 = 3_600_000;

/// The range checks of the NUMA-balancing fields: the sysctls in `1..=`[`MAX_SYSCTL_MS`]
/// and set only with NUMA balancing on, which the 2.6 era refuses (whether the policy
/// accepts NUMA balancing is the catalogue's check, `NumaBalancing::applies_to`).
pub(crate) fn check_numa_balancing(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    for (field, v) in [
        ("numa_scan_delay_ms", cfg.numa_scan_delay_ms),
        ("numa_scan_period_min_ms", cfg.numa_scan_period_min_ms),
    ] {
        if let Some(v) = v {
            if !(1..=MAX_SYSCTL_MS).contains(&v) {
                return Err(bad(field, v, "milliseconds in 1..=3600000"));
            }
            if !cfg.numa_balancing {
                return Err(bad(field, v, "unset unless numa_balancing = true"));
            }
        }
    }
    if cfg.numa_balancing && cfg.linux_era == LinuxEra::V2_6 {
        return Err(bad(
            "numa_balancing",
            true,
            "false with linux_era \"2.6\" (automatic NUMA balancing arrived in Linux 3.8)",
        ));
    }
    Ok(())
}
