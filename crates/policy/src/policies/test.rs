use crate::{OriginRule, PolicyConfig, PolicyError, PolicyName};

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
    ok.origin = OriginRule::Strict;
    assert!(ok.build().is_ok());
}

#[test]
fn toml_and_json_round_trip() {
    let mut cfg = PolicyConfig::new(PolicyName::CONSERVATIVE_SOFT);
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
        PolicyConfig::from_toml_str("name = \"thread-aware\"\norigin = \"off\"\n").unwrap();
    assert_eq!(minimal.name, PolicyName::THREAD_AWARE);
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
        PolicyConfig::from_json_str(r#"{"name": "linux", "age_limit": 3}"#)
            .unwrap()
            .age_limit,
        Some(3)
    );
    assert_eq!(
        PolicyConfig::from_toml_str("name = \"linux\"\nage_limit = 3\n")
            .unwrap()
            .age_limit,
        Some(3)
    );
}
