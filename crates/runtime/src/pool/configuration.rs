//! rayon-core's deprecated `Configuration`, `initialize` and `ThreadPool::new`: thin
//! wrappers over [`ThreadPoolBuilder`], as in rayon-core 1.13. A child of the pool module,
//! so that every `ThreadPool` method lives in it.
#![allow(deprecated)]

use std::any::Any;
use std::error::Error;

use crate::builder::ThreadPoolBuilder;
use crate::pool::ThreadPool;

/// rayon's deprecated builder: every method forwards to [`ThreadPoolBuilder`]'s.
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Debug, Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl Configuration {
    /// [`ThreadPoolBuilder::new`].
    #[must_use]
    pub fn new() -> Configuration {
        Configuration {
            builder: ThreadPoolBuilder::new(),
        }
    }

    /// [`ThreadPoolBuilder::build`], its error boxed.
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`].
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    #[must_use]
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.builder = self.builder.thread_name(closure);
        self
    }

    /// [`ThreadPoolBuilder::num_threads`].
    #[must_use]
    pub fn num_threads(mut self, num_threads: usize) -> Configuration {
        self.builder = self.builder.num_threads(num_threads);
        self
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    #[must_use]
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.builder = self.builder.panic_handler(panic_handler);
        self
    }

    /// [`ThreadPoolBuilder::stack_size`].
    #[must_use]
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.builder = self.builder.stack_size(stack_size);
        self
    }

    /// [`ThreadPoolBuilder::breadth_first`].
    #[must_use]
    pub fn breadth_first(mut self) -> Self {
        self.builder = self.builder.breadth_first();
        self
    }

    /// [`ThreadPoolBuilder::start_handler`].
    #[must_use]
    pub fn start_handler<H>(mut self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.start_handler(start_handler);
        self
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    #[must_use]
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.exit_handler(exit_handler);
        self
    }
}

// rayon-core's deprecated constructor: the one `ThreadPool` method outside `pool.rs`, since
// it takes a `Configuration` (a builder, above the pool: `pool.rs` cannot name it).
impl ThreadPool {
    /// rayon's deprecated constructor: [`Configuration::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`].
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }
}

/// rayon's deprecated global initialisation: [`ThreadPoolBuilder::build_global`] with
/// `config`'s builder, its error boxed.
///
/// # Errors
/// As [`ThreadPoolBuilder::build_global`].
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.builder.build_global().map_err(Box::from)
}
