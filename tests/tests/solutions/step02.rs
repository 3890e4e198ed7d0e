//! A solution to chapter 2's exercise. Try it yourself before reading on.

use step02::EventLoop;

use super::Log;

// ANCHOR: sum_in_chunks
/// Schedules the first chunk; each chunk schedules the next, carrying the
/// running total with it, and returns the thread to the loop in between.
pub fn sum_in_chunks(lp: &EventLoop, numbers: Vec<u64>, chunk: usize, log: Log) {
    lp.call_soon(move |lp| add_chunk(lp, numbers, chunk, 0, 0, log));
}

fn add_chunk(
    lp: &EventLoop,
    numbers: Vec<u64>,
    chunk: usize,
    start: usize,
    total: u64,
    log: Log,
) {
    let end = numbers.len().min(start + chunk);
    let total = total + numbers[start..end].iter().sum::<u64>();
    log.borrow_mut().push(format!("added {end}"));
    if end < numbers.len() {
        lp.call_soon(move |lp| add_chunk(lp, numbers, chunk, end, total, log));
    } else {
        log.borrow_mut().push(format!("total {total}"));
    }
}
// ANCHOR_END: sum_in_chunks
