//! `ZONAL_NUM_THREADS` that is not a worker count falls back to the default count, as
//! rayon's `RAYON_NUM_THREADS` does, with a warning naming the variable and the value.
//! (Its own test binary: it sets the process's environment before the global pool exists.)

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records the level and message of every event on the thread it is the default of.
#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<(tracing::Level, String)>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let level = *event.metadata().level();
        self.0.lock().unwrap().push((level, m.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn an_invalid_value_falls_back_to_the_default_with_a_warning() {
    let default = zonal_runtime::ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap()
        .num_workers();
    std::env::set_var(zonal_runtime::NUM_THREADS_VAR, "three");
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        zonal_runtime::ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build_global()
            .unwrap();
    });
    std::env::remove_var(zonal_runtime::NUM_THREADS_VAR);
    assert_eq!(zonal_runtime::current_num_threads(), default);
    let events = recorder.0.lock().unwrap();
    let warned = events.iter().any(|(level, msg)| {
        *level == tracing::Level::WARN
            && msg.contains("ZONAL_NUM_THREADS=\"three\" is not a worker count")
            && msg.contains("using the default")
    });
    assert!(
        warned,
        "no warning naming the variable and the value: {events:?}"
    );
}
