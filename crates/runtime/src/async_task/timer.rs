//! Timed waits: [`sleep`] and [`sleep_until`], served by one timer thread for the whole
//! process (started on the first timed wait, named `zonal-timer`, living as long as the
//! process, like the global pool). It keeps the pending deadlines in a heap and, at each
//! deadline, marks the wait fired and wakes its waker — for a Zonal task, that re-queues it
//! (`waker.rs`). No tokio on the worker path: the workers never block on a timer, they only
//! get woken tasks back.
//!
//! No lost wake-up: a [`Sleep`] stores its waker under its entry's lock, then reads `fired`;
//! the timer sets `fired`, then takes the waker under the same lock. A dropped `Sleep`
//! takes its waker back, so that its task is not kept alive until the deadline; the small
//! entry itself leaves the heap at its deadline.
//!
//! A `Sleep` works under any executor (it needs nothing but its waker). A waker that panics
//! when the timer wakes it does not stop the timer: the panic is caught and logged
//! (`waker::wake_foreign`), the wait counts as fired, and the timer goes on to the next.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::waker::wake_foreign;

/// One timed wait as the timer sees it.
#[derive(Debug)]
struct Entry {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Entry {
    fn waker(&self) -> std::sync::MutexGuard<'_, Option<Waker>> {
        self.waker.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A heap item: deadline, then insertion order (FIFO among equal deadlines).
struct Item(Instant, u64, Arc<Entry>);

impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

#[derive(Default)]
struct Heap {
    items: BinaryHeap<Reverse<Item>>,
    next_seq: u64,
}

/// The process's timer.
#[derive(Default)]
struct Timer {
    heap: Mutex<Heap>,
    cv: Condvar,
}

impl Timer {
    /// The timer, its thread started on first use.
    ///
    /// # Panics
    /// If the timer thread cannot be started (the OS refuses a thread).
    fn get() -> &'static Timer {
        static TIMER: OnceLock<&'static Timer> = OnceLock::new();
        TIMER.get_or_init(|| {
            let timer: &'static Timer = Box::leak(Box::default());
            std::thread::Builder::new()
                .name("zonal-timer".into())
                .spawn(move || {
                    // Started by whichever thread sleeps first, often a pinned worker:
                    // not on that worker's CPU.
                    crate::os::release_current_thread();
                    timer.run()
                })
                .unwrap_or_else(|e| panic!("zonal_runtime: cannot start the timer thread: {e}"));
            timer
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Heap> {
        self.heap.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a wait; wakes the timer thread if it is now the earliest.
    fn add(&self, deadline: Instant, entry: Arc<Entry>) {
        let mut g = self.lock();
        let earliest = g.items.peek().is_none_or(|Reverse(i)| deadline < i.0);
        let seq = g.next_seq;
        g.next_seq += 1;
        g.items.push(Reverse(Item(deadline, seq, entry)));
        drop(g);
        if earliest {
            self.cv.notify_one();
        }
    }

    /// The timer thread: fires every due wait, then sleeps until the next deadline.
    fn run(&self) {
        let mut due = Vec::new();
        let mut g = self.lock();
        loop {
            let now = Instant::now();
            while g.items.peek().is_some_and(|Reverse(i)| i.0 <= now) {
                if let Some(Reverse(i)) = g.items.pop() {
                    due.push(i.2);
                }
            }
            if !due.is_empty() {
                drop(g);
                for e in due.drain(..) {
                    e.fired.store(true, Ordering::Release);
                    let w = e.waker().take();
                    if let Some(w) = w {
                        // Any executor's waker: a panic is logged, and the timer goes on.
                        wake_foreign(w, "the timer");
                    }
                }
                g = self.lock();
                continue;
            }
            g = match g.items.peek() {
                None => self.cv.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(Reverse(i)) => {
                    let d = i.0.saturating_duration_since(now);
                    self.cv
                        .wait_timeout(g, d)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}

/// A future that completes at a deadline ([`sleep`], [`sleep_until`]).
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    /// `None`: never (a duration too long for `Instant`).
    deadline: Option<Instant>,
    entry: Option<Arc<Entry>>,
}

/// Waits for `duration` (a timer thread wakes the task; the worker runs other tasks
/// meanwhile). A duration past what `Instant` can represent waits for ever.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use std::time::Duration;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let h = pool.spawn_async(async {
///     zonal::task::sleep(Duration::from_millis(1)).await;
///     7
/// });
/// assert_eq!(h.join().unwrap(), 7);
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        deadline: Instant::now().checked_add(duration),
        entry: None,
    }
}

/// Waits until `deadline` (see [`sleep`]).
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline: Some(deadline),
        entry: None,
    }
}

impl Sleep {
    /// The deadline, if any (`None`: waits for ever).
    #[must_use]
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(deadline) = self.deadline else {
            return Poll::Pending;
        };
        if let Some(e) = &self.entry {
            if e.fired.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            {
                let mut w = e.waker();
                match &*w {
                    Some(old) if old.will_wake(cx.waker()) => {}
                    _ => *w = Some(cx.waker().clone()),
                }
            }
            return if e.fired.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            };
        }
        if deadline <= Instant::now() {
            return Poll::Ready(());
        }
        let e = Arc::new(Entry {
            fired: AtomicBool::new(false),
            waker: Mutex::new(Some(cx.waker().clone())),
        });
        self.entry = Some(Arc::clone(&e));
        Timer::get().add(deadline, e);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(e) = &self.entry {
            let w = e.waker().take();
            drop(w);
        }
    }
}

#[cfg(all(test, not(zonal_loom)))]
mod test {
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize, std::thread::Thread);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
            self.1.unpark();
        }
    }

    #[test]
    fn a_sleep_fires_once_after_its_deadline_and_a_past_one_at_once() {
        let count = Arc::new(Count(AtomicUsize::new(0), std::thread::current()));
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut past = sleep(Duration::ZERO);
        assert_eq!(Pin::new(&mut past).poll(&mut cx), Poll::Ready(()));
        let mut s = sleep(Duration::from_millis(5));
        let mut polls = 0;
        while Pin::new(&mut s).poll(&mut cx).is_pending() {
            polls += 1;
            std::thread::park();
        }
        assert!(polls >= 1);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "woken exactly once");
        let mut never = sleep(Duration::MAX);
        assert_eq!(never.deadline(), None);
        assert!(Pin::new(&mut never).poll(&mut cx).is_pending());
    }
}
