//! `fast`: step 8's runtime with the same public API, rebuilt for speed in
//! safe Rust (`unsafe_code` is forbidden here as in every crate of the
//! workspace). What is fast, and why:
//!
//! - **Timers**: a hierarchical timing wheel (`wheel.rs`), seven levels of
//!   64 slots, 1 ms ticks. Setting a timer and firing one are O(1), with
//!   no `log n` walk over cold memory as a binary heap's pop makes; a
//!   cancelled timer is unlinked from its slot at once, in O(1), so there
//!   is nothing to sweep. The loop waits until the wheel's next tick, and a
//!   deadline's tick is rounded up: no timer fires early, and one fires
//!   within a tick of its deadline when the loop is free.
//! - **Tasks**: one allocation for the future (`Box<Option<F>>`, pinned;
//!   `Option::as_pin_mut` polls it in place without `unsafe`); the join
//!   slot lives in the task table, a `Vec` of slots reused through a free
//!   list, and a unit value (`()`) is handed over without allocating.
//! - **Wakers**: one per slot of the table, made the first time the slot is
//!   used and reused by every later task in it, so a task that reuses a
//!   slot allocates no waker, and a wake-up allocates nothing.
//!
//! What safe Rust costs: a `Waker` can only be made from an `Arc` of a
//! `Send + Sync` type, and a task's future is neither, so the future and
//! its waker cannot share one allocation as tokio's do. A task that takes
//! a new slot makes two allocations (its future, the slot's waker); one
//! that reuses a slot, one; a task whose value has a size, one more for it.

mod event_loop;
mod join;
mod lost_wake_up;
pub mod net;
mod reactor;
mod sleep;
mod task;
mod timeout;
mod waker;
mod wheel;

pub use event_loop::{Callback, EventLoop, TimerHandle, join_all, spawn};
pub use join::{CancelOnDrop, JoinError, JoinHandle, panic_message};
pub use lost_wake_up::LostWakeUp;
pub use net::{LocalStream, TcpListener, TcpStream, socket_pair};
pub use reactor::Socket;
pub use sleep::{Sleep, YieldNow, sleep, sleep_until, yield_now};
pub use timeout::{TimedOut, timeout};
