//! Policy configs in JSON and TOML on arbitrary text: a config that builds, or a typed
//! error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zonal_policy::PolicyConfig;

fuzz_target!(|text: &str| {
    for cfg in [
        PolicyConfig::from_json_str(text),
        PolicyConfig::from_toml_str(text),
    ]
    .into_iter()
    .flatten()
    {
        cfg.build().expect("a config that was read builds");
    }
});
