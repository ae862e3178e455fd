use proptest::prelude::*;

use crate::{
    ConfigField, Fields, Filters, ImbalanceRule, LinuxEra, Mechanism, OriginRule, PlacementMode,
    PolicyConfig, PolicyError, PolicyName, ZoneMode, DEFAULT_AGE_LIMIT, NEVER_AGED,
};

#[test]
fn every_name_builds_with_defaults() {
    for name in PolicyName::all() {
        let p = PolicyConfig::new(name).build().unwrap();
        assert_eq!(p.name(), name.as_str());
    }
}

#[test]
fn composed_filters_show_in_the_name() {
    for name in [
        PolicyName::THREAD_AWARE,
        PolicyName::NUMALB,
        PolicyName::AVERAGE_WEIGHT,
    ] {
        let mut cfg = PolicyConfig::new(name);
        cfg.conservative_filters = Some(true);
        let p = cfg.build().unwrap();
        assert_eq!(p.name(), format!("{name}+conservative"));
    }
}

#[test]
fn bad_values_are_refused() {
    let bad = |f: fn(&mut PolicyConfig), name: PolicyName, field: &str| {
        let mut cfg = PolicyConfig::new(name);
        f(&mut cfg);
        match cfg.build() {
            Err(PolicyError::BadValue { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{field}: {other:?}"),
        }
    };
    bad(
        |c| c.age_limit = Some(0),
        PolicyName::CONSERVATIVE_HARD,
        "age_limit",
    );
    bad(
        |c| c.numa_imbalance_pct = Some(1001),
        PolicyName::LINUX,
        "numa_imbalance_pct",
    );
    bad(
        |c| c.numalb_alpha = Some(-0.5),
        PolicyName::NUMALB,
        "numalb_alpha",
    );
    bad(
        |c| c.numalb_alpha = Some(f64::NAN),
        PolicyName::NUMALB,
        "numalb_alpha",
    );
    bad(
        |c| c.conservative_filters = Some(true),
        PolicyName::LINUX,
        "conservative_filters",
    );
    bad(
        |c| c.conservative_filters = Some(true),
        PolicyName::UNRESTRICTED,
        "conservative_filters",
    );
    bad(
        |c| c.conservative_filters = Some(false),
        PolicyName::CONSERVATIVE_SOFT,
        "conservative_filters",
    );
    let mut ok = PolicyConfig::new(PolicyName::LINUX);
    ok.numa_imbalance_pct = Some(1000);
    assert!(ok.build().is_ok());
}

#[test]
fn toml_and_json_round_trip() {
    let mut cfg = PolicyConfig::new(PolicyName::NUMALB);
    cfg.origin = OriginRule::Strict;
    cfg.age_limit = Some(2);
    cfg.numa_imbalance_pct = Some(17);
    cfg.numalb_alpha = Some(0.25);
    cfg.conservative_filters = Some(true);
    let toml_text = toml::to_string(&cfg).unwrap();
    assert_eq!(PolicyConfig::from_toml_str(&toml_text).unwrap(), cfg);
    let json = serde_json::to_string(&cfg).unwrap();
    assert_eq!(PolicyConfig::from_json_str(&json).unwrap(), cfg);

    let minimal =
        PolicyConfig::from_toml_str("name = \"conservative-soft\"\norigin = \"off\"\n").unwrap();
    assert_eq!(minimal.name, PolicyName::CONSERVATIVE_SOFT);
    assert_eq!(minimal.origin, OriginRule::Off);
    assert_eq!(minimal.age_limit, None);
    let j = PolicyConfig::from_json_str(r#"{"name":"numalb","numalb_alpha":2.0}"#).unwrap();
    assert_eq!(j.numalb_alpha, Some(2.0));
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let err = PolicyConfig::named("fair-share").unwrap_err().to_string();
    for name in PolicyName::all() {
        assert!(err.contains(name.as_str()), "{err}");
    }
    let err = PolicyConfig::from_toml_str("name = \"fair-share\"")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("conservative-hard") && err.contains("unrestricted"),
        "{err}"
    );
    let err = PolicyConfig::from_json_str(r#"{"name":"fair-share"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("average-weight"), "{err}");
    // Unknown fields are refused too.
    assert!(PolicyConfig::from_toml_str("name = \"linux\"\nzone = 3").is_err());
}

#[test]
fn config_documents_are_objects_with_values_in_range() {
    for text in [r#"["linux"]"#, r#""linux""#, "3", "null", "true"] {
        match PolicyConfig::from_json_str(text) {
            Err(PolicyError::BadValue { field, .. }) => assert_eq!(field, "(top level)", "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    match PolicyConfig::from_json_str(r#"{"name":"conservative-hard","age_limit":0}"#) {
        Err(PolicyError::BadValue { field, .. }) => assert_eq!(field, "age_limit"),
        other => panic!("{other:?}"),
    }
    match PolicyConfig::from_toml_str("name = \"numalb\"\nnumalb_alpha = -1.0") {
        Err(PolicyError::BadValue { field, .. }) => assert_eq!(field, "numalb_alpha"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn repeated_keys_are_refused_in_json_and_toml() {
    // JSON: serde_json would keep the last value; refused at every level, naming the key.
    for (text, want_path, want_key) in [
        (
            r#"{"name": "linux", "age_limit": 2, "age_limit": 3}"#,
            "",
            "age_limit",
        ),
        (r#"{"name": "linux", "name": "numalb"}"#, "", "name"),
        // Inside a value the config refuses anyway: the repetition is named first.
        (
            r#"{"name": "linux", "origin": {"a": 1, "a": 2}}"#,
            "origin",
            "a",
        ),
    ] {
        match PolicyConfig::from_json_str(text) {
            Err(PolicyError::DuplicateKey {
                path, key, line, ..
            }) => {
                assert_eq!(
                    (path.as_str(), key.as_str(), line),
                    (want_path, want_key, 1),
                    "{text}"
                );
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let err = PolicyConfig::from_json_str(
        "{\"name\": \"linux\",\n \"age_limit\": 2,\n \"age_limit\": 3}",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("\"age_limit\" appears twice in the top-level object")
            && err.contains("line 3"),
        "{err}"
    );
    // Malformed JSON is still a parse error, not a key error.
    assert!(matches!(
        PolicyConfig::from_json_str(r#"{"name": "linux", "age_limit": }"#),
        Err(PolicyError::Json(_))
    ));
    // TOML forbids a key given twice; the parser refuses it, naming the key.
    for text in [
        "name = \"linux\"\nage_limit = 2\nage_limit = 3\n",
        "name = \"linux\"\nname = \"numalb\"\n",
    ] {
        match PolicyConfig::from_toml_str(text) {
            Err(PolicyError::Toml(e)) => {
                let msg = e.to_string();
                assert!(msg.contains("duplicate key"), "{text}: {msg}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // Without the repetition both read.
    assert_eq!(
        PolicyConfig::from_json_str(r#"{"name": "conservative-hard", "age_limit": 3}"#)
            .unwrap()
            .age_limit,
        Some(3)
    );
    assert_eq!(
        PolicyConfig::from_toml_str("name = \"conservative-hard\"\nage_limit = 3\n")
            .unwrap()
            .age_limit,
        Some(3)
    );
}

#[test]
fn a_field_the_policy_does_not_take_is_refused_naming_field_value_and_policy() {
    let mut cfg = PolicyConfig::new(PolicyName::LINUX);
    cfg.numalb_alpha = Some(0.5);
    let err = cfg.build().unwrap_err();
    match &err {
        PolicyError::NotAccepted {
            field,
            value,
            policy,
            accepts,
        } => {
            assert_eq!(*field, ConfigField::NumalbAlpha);
            assert_eq!(value, "0.5");
            assert_eq!(*policy, PolicyName::LINUX);
            assert_eq!(*accepts, PolicyName::LINUX.entry().accepts);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "numalb_alpha = 0.5 is not a parameter of policy linux; it accepts: \
         numa_imbalance_pct, linux_era, imbalance_rule, numa_balancing, numa_scan_delay_ms, \
         numa_scan_period_min_ms, zone_periodic, origin_check, ageing, placement_rule, \
         newidle_zone, fork_zone, wake_zone"
    );

    // The origin rule is written as in configs; a policy that takes nothing says so.
    let err = PolicyConfig::from_toml_str("name = \"linux\"\norigin = \"strict\"\n").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("origin = \"strict\" is not a parameter of policy linux;"),
        "{err}"
    );
    let err = PolicyConfig::from_json_str(r#"{"name": "unrestricted", "age_limit": 4}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "age_limit = 4 is not a parameter of policy unrestricted; it accepts: linux_era"
    );
    let err = PolicyConfig::from_json_str(r#"{"name": "conservative-hard", "numalb_alpha": 2.0}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("numalb_alpha = 2 is not a parameter of policy conservative-hard;"),
        "{err}"
    );
}

#[test]
fn the_more_precise_messages_come_first() {
    // conservative_filters = true for linux names the policy to use instead.
    let mut cfg = PolicyConfig::new(PolicyName::LINUX);
    cfg.conservative_filters = Some(true);
    match cfg.build() {
        Err(PolicyError::BadValue {
            field, expected, ..
        }) => {
            assert_eq!(field, "conservative_filters");
            assert!(expected.contains("conservative-hard"), "{expected}");
        }
        other => panic!("{other:?}"),
    }
    // conservative_filters = false for linux: not a parameter it takes.
    cfg.conservative_filters = Some(false);
    assert!(matches!(
        cfg.build(),
        Err(PolicyError::NotAccepted {
            field: ConfigField::ConservativeFilters,
            ..
        })
    ));
    // numa_balancing for numalb names the baselines it applies to.
    let mut cfg = PolicyConfig::new(PolicyName::NUMALB);
    cfg.numa_balancing = true;
    let err = cfg.build().unwrap_err().to_string();
    assert!(
        err.contains("numa_balancing") && err.contains("thread-aware"),
        "{err}"
    );
}

#[test]
fn composed_filter_fields_need_the_filter() {
    for name in [
        PolicyName::THREAD_AWARE,
        PolicyName::NUMALB,
        PolicyName::AVERAGE_WEIGHT,
    ] {
        let mut cfg = PolicyConfig::new(name);
        cfg.age_limit = Some(2);
        match cfg.build() {
            Err(PolicyError::BadValue {
                field,
                value,
                expected,
            }) => {
                assert_eq!((field, value.as_str()), ("age_limit", "2"));
                assert!(
                    expected.contains("conservative_filters = true"),
                    "{expected}"
                );
                assert!(expected.contains(name.as_str()), "{expected}");
            }
            other => panic!("{name}: {other:?}"),
        }
        cfg.conservative_filters = Some(true);
        cfg.origin = OriginRule::Off;
        assert!(cfg.build().is_ok(), "{name}");
    }
}

#[test]
fn fields_set_names_what_differs_from_the_defaults() {
    let mut cfg = PolicyConfig::new(PolicyName::THREAD_AWARE);
    assert_eq!(cfg.fields_set(), Fields::EMPTY);
    cfg.origin = OriginRule::NoFarther;
    cfg.linux_era = LinuxEra::Modern;
    cfg.numa_balancing = false;
    assert_eq!(cfg.fields_set(), Fields::EMPTY);
    cfg.origin = OriginRule::Off;
    cfg.linux_era = LinuxEra::V2_6;
    cfg.conservative_filters = Some(false);
    assert_eq!(
        cfg.fields_set(),
        Fields::of(&[
            ConfigField::Origin,
            ConfigField::LinuxEra,
            ConfigField::ConservativeFilters
        ])
    );
}

#[test]
fn placement_parses_and_refuses_other_values() {
    assert_eq!(
        "zone".parse::<PlacementMode>().unwrap(),
        PlacementMode::Zone
    );
    assert_eq!(
        "paper".parse::<PlacementMode>().unwrap(),
        PlacementMode::Paper
    );
    assert_eq!(PlacementMode::default(), PlacementMode::Zone);
    for m in PlacementMode::ALL {
        assert_eq!(m.as_str().parse::<PlacementMode>().unwrap(), m);
        assert_eq!(m.to_string(), m.as_str());
    }
    for bad in ["usual", "Paper", "", "zone "] {
        match bad.parse::<PlacementMode>() {
            Err(
                e @ PolicyError::BadValue {
                    field: "placement", ..
                },
            ) => {
                let msg = e.to_string();
                assert!(msg.contains(&format!("{bad:?}")), "{msg}");
                assert!(msg.contains("zone, paper"), "{msg}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn placement_is_set_only_when_paper_and_accepted_with_the_filter() {
    let mut cfg = PolicyConfig::new(PolicyName::CONSERVATIVE_SOFT);
    cfg.placement = PlacementMode::Zone;
    assert_eq!(cfg.fields_set(), Fields::EMPTY);
    cfg.placement = PlacementMode::Paper;
    assert_eq!(cfg.fields_set(), Fields::of(&[ConfigField::Placement]));
    assert_eq!(ConfigField::Placement.as_str(), "placement");
    for name in PolicyName::all() {
        let mut cfg = PolicyConfig::new(name);
        cfg.placement = PlacementMode::Paper;
        let filters = name.entry().filters;
        assert_eq!(
            name.entry().accepts.contains(ConfigField::Placement),
            filters != Filters::Never,
            "{name}"
        );
        match filters {
            Filters::Always => assert!(cfg.build().is_ok(), "{name}"),
            Filters::Optional => {
                // Read by the composed filter only.
                let err = cfg.build().err().unwrap().to_string();
                assert!(
                    err.contains("placement") && err.contains("conservative_filters"),
                    "{err}"
                );
                cfg.conservative_filters = Some(true);
                assert!(cfg.build().is_ok(), "{name}");
            }
            Filters::Never => match cfg.build() {
                Err(PolicyError::NotAccepted { field, value, .. }) => {
                    assert_eq!(
                        (field, value.as_str()),
                        (ConfigField::Placement, "\"paper\"")
                    );
                }
                other => panic!("{name}: {:?}", other.map(|p| p.name().to_owned())),
            },
        }
    }
}

#[cfg(feature = "config")]
#[test]
fn placement_reads_from_toml_and_json() {
    let cfg = PolicyConfig::from_toml_str("name = \"conservative-hard\"\nplacement = \"paper\"\n")
        .unwrap();
    assert_eq!(cfg.placement, PlacementMode::Paper);
    let cfg = PolicyConfig::from_json_str(r#"{"name": "conservative-soft", "placement": "zone"}"#)
        .unwrap();
    assert_eq!(cfg.placement, PlacementMode::Zone);
    let cfg = PolicyConfig::from_json_str(r#"{"name": "linux"}"#).unwrap();
    assert_eq!(cfg.placement, PlacementMode::Zone);
    let err = PolicyConfig::from_json_str(r#"{"name": "conservative-soft", "placement": "usual"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("usual"), "{err}");
    let err = PolicyConfig::from_toml_str("name = \"linux\"\nplacement = \"paper\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("placement"), "{err}");
}

#[test]
fn numa_balancing_applies_where_the_row_accepts_it() {
    for name in PolicyName::all() {
        assert_eq!(
            crate::NumaBalancing::applies_to(name),
            name == PolicyName::LINUX || name == PolicyName::THREAD_AWARE,
            "{name}"
        );
    }
}

/// A valid value of `field`, other than its default; `conservative_filters` is `true`.
fn set(cfg: &mut PolicyConfig, field: ConfigField, v: u32) {
    match field {
        ConfigField::Origin => {
            cfg.origin = if v % 2 == 0 {
                OriginRule::Strict
            } else {
                OriginRule::Off
            }
        }
        ConfigField::AgeLimit => cfg.age_limit = Some(1 + v % 100),
        ConfigField::NumaImbalancePct => cfg.numa_imbalance_pct = Some(v % 1001),
        ConfigField::NumalbAlpha => cfg.numalb_alpha = Some(f64::from(v % 1000) / 8.0),
        ConfigField::ConservativeFilters => cfg.conservative_filters = Some(true),
        ConfigField::LinuxEra => cfg.linux_era = LinuxEra::V2_6,
        ConfigField::ImbalanceRule => cfg.imbalance_rule = ImbalanceRule::Threshold,
        ConfigField::Placement => cfg.placement = PlacementMode::Paper,
        ConfigField::NumaBalancing => cfg.numa_balancing = true,
        ConfigField::NumaScanDelayMs => cfg.numa_scan_delay_ms = Some(1 + v % 3_600_000),
        ConfigField::NumaScanPeriodMinMs => cfg.numa_scan_period_min_ms = Some(1 + v % 3_600_000),
        ConfigField::ZonePeriodic => cfg.zone_periodic = true,
        ConfigField::OriginCheck => cfg.origin_check = true,
        ConfigField::Ageing => cfg.ageing = true,
        ConfigField::PlacementRule => cfg.placement_rule = true,
        ConfigField::NewIdleZone => cfg.newidle_zone = true,
        ConfigField::ForkZone => cfg.fork_zone = true,
        ConfigField::WakeZone => cfg.wake_zone = true,
    }
}

/// The fields `field` is read with: the NUMA-balancing sysctls with `numa_balancing`, the
/// composed filter's fields with `conservative_filters = true`.
fn requires(field: ConfigField) -> &'static [ConfigField] {
    match field {
        ConfigField::NumaScanDelayMs | ConfigField::NumaScanPeriodMinMs => {
            &[ConfigField::NumaBalancing]
        }
        ConfigField::Origin | ConfigField::AgeLimit | ConfigField::Placement => {
            &[ConfigField::ConservativeFilters]
        }
        ConfigField::ImbalanceRule => &[ConfigField::LinuxEra],
        _ => &[],
    }
}

#[test]
fn mechanisms_are_linux_s_alone_and_refused_elsewhere_naming_the_field() {
    for m in Mechanism::ALL {
        assert_eq!(m.field().as_str(), m.as_str());
        assert_eq!(m.as_str().parse::<Mechanism>().unwrap(), m);
        let on = PolicyConfig::new(PolicyName::LINUX).with_mechanism(m);
        assert_eq!(on.fields_set(), Fields::of(&[m.field()]));
        assert_eq!(on.mechanisms().collect::<Vec<_>>(), [m]);
        for era in LinuxEra::ALL {
            let mut cfg = on.clone();
            cfg.linux_era = era;
            assert_eq!(cfg.build().unwrap().name(), "linux", "{m} {era}");
        }
        for name in PolicyName::all().filter(|&n| n != PolicyName::LINUX) {
            assert!(!name.entry().accepts.contains(m.field()), "{name}");
            let mut cfg = PolicyConfig::new(name).with_mechanism(m);
            cfg.conservative_filters = (name.entry().filters == Filters::Optional).then_some(true);
            match cfg.build() {
                Err(PolicyError::NotAccepted {
                    field,
                    value,
                    policy,
                    ..
                }) => assert_eq!((field, value.as_str(), policy), (m.field(), "true", name)),
                other => panic!("{name} {m}: {:?}", other.map(|p| p.name().to_owned())),
            }
        }
    }
    assert!(matches!(
        "zone".parse::<Mechanism>(),
        Err(PolicyError::BadValue {
            field: "mechanism",
            ..
        })
    ));
    // Off by default, and a default config's output names none of them.
    let cfg = PolicyConfig::new(PolicyName::LINUX);
    assert_eq!(cfg.mechanisms().count(), 0);
    assert_eq!(cfg.mechanism_filters(), crate::MechanismFilters::default());
}

#[test]
fn each_mechanism_builds_exactly_its_own_filter() {
    let filters = |m| {
        PolicyConfig::new(PolicyName::LINUX)
            .with_mechanism(m)
            .mechanism_filters()
    };
    let p = filters(Mechanism::ZonePeriodic).periodic.unwrap();
    assert_eq!(
        (p.zone, p.origin, p.age_limit),
        (ZoneMode::Hard, OriginRule::Off, NEVER_AGED)
    );
    assert_eq!(p.ageing(), crate::Ageing::Never);
    let p = filters(Mechanism::OriginCheck).periodic.unwrap();
    assert_eq!(
        (p.zone, p.origin, p.age_limit),
        (ZoneMode::Off, OriginRule::NoFarther, NEVER_AGED)
    );
    let p = filters(Mechanism::Ageing).periodic.unwrap();
    assert_eq!(
        (p.zone, p.origin, p.age_limit),
        (ZoneMode::Off, OriginRule::Off, DEFAULT_AGE_LIMIT)
    );
    assert_eq!(p.ageing(), crate::Ageing::After(DEFAULT_AGE_LIMIT));
    let f = filters(Mechanism::NewIdleZone);
    assert_eq!((f.periodic, f.fork), (None, None));
    let n = f.new_idle.unwrap();
    assert_eq!(
        (n.zone, n.origin, n.age_limit),
        (ZoneMode::Hard, OriginRule::Off, NEVER_AGED)
    );
    let f = filters(Mechanism::ForkZone);
    assert_eq!((f.periodic, f.new_idle, f.wake), (None, None, None));
    assert_eq!(f.fork, Some(n));
    let f = filters(Mechanism::WakeZone);
    assert_eq!((f.periodic, f.new_idle, f.fork), (None, None, None));
    assert_eq!(f.wake, Some(n));
    assert_eq!(
        filters(Mechanism::PlacementRule),
        crate::MechanismFilters::default()
    );
    // Only ageing ages tasks (the simulator reads the steal side's ageing).
    for m in Mechanism::ALL {
        let p = PolicyConfig::new(PolicyName::LINUX)
            .with_mechanism(m)
            .build()
            .unwrap();
        assert_eq!(
            p.steal_side().ageing().limit(),
            (m == Mechanism::Ageing).then_some(DEFAULT_AGE_LIMIT),
            "{m}"
        );
    }
}

#[cfg(feature = "config")]
#[test]
fn mechanisms_read_from_toml_and_json_and_are_written_only_when_on() {
    let cfg = PolicyConfig::from_toml_str("name = \"linux\"\nzone_periodic = true\n").unwrap();
    assert!(cfg.zone_periodic);
    let cfg = PolicyConfig::from_json_str(r#"{"name": "linux", "newidle_zone": true}"#).unwrap();
    assert_eq!(
        cfg.mechanisms().collect::<Vec<_>>(),
        [Mechanism::NewIdleZone]
    );
    let err = PolicyConfig::from_json_str(r#"{"name": "linux", "ageing": 3}"#).unwrap_err();
    assert!(matches!(err, PolicyError::Json(_)), "{err}");
    let err = PolicyConfig::from_toml_str("name = \"conservative-hard\"\nageing = true\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("ageing = true is not a parameter of policy conservative-hard"),
        "{err}"
    );
    let json = serde_json::to_string(&PolicyConfig::new(PolicyName::LINUX)).unwrap();
    for m in Mechanism::ALL {
        assert!(!json.contains(m.as_str()), "{json}");
    }
    let on = PolicyConfig::new(PolicyName::LINUX).with_mechanism(Mechanism::Ageing);
    let json = serde_json::to_string(&on).unwrap();
    assert!(json.contains("\"ageing\":true"), "{json}");
    assert_eq!(PolicyConfig::from_json_str(&json).unwrap(), on);
}

proptest! {
    /// For every policy and every single field (with the fields it is read with),
    /// `validate` accepts it iff the row's `accepts` has it; a refusal of a field alone
    /// names it.
    #[test]
    fn validate_accepts_a_field_iff_the_row_does(
        policy in 0..PolicyName::all().len(),
        field in 0..ConfigField::ALL.len(),
        v in any::<u32>(),
    ) {
        let name = PolicyName::all().nth(policy).unwrap();
        let field = ConfigField::ALL[field];
        let mut cfg = PolicyConfig::new(name);
        set(&mut cfg, field, v);
        for &r in requires(field) {
            set(&mut cfg, r, v);
        }
        let accepts = name.entry().accepts;
        // A field the row takes comes with the fields it is read with.
        if accepts.contains(field) {
            for &r in requires(field) {
                prop_assert!(accepts.contains(r), "{name}: {field} without {r}");
            }
        }
        let got = super::validate(&cfg);
        prop_assert_eq!(got.is_ok(), accepts.contains(field), "{}: {} ({:?})", name, field, got);
        if let (Err(e), []) = (&got, requires(field)) {
            prop_assert!(e.to_string().contains(field.as_str()), "{}", e);
        }
        prop_assert_eq!(cfg.build().is_ok(), accepts.contains(field));
    }
}
