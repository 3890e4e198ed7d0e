//! Folding repeated turns: a loop that never sleeps turns thousands of
//! times a second, and says so in one line.

use super::output::{send, thousands};

/// Folds repeated turns (see the module's doc).
#[derive(Default)]
pub(super) struct Fold {
    /// What the last whole turn said, and this turn so far, times hidden.
    last_turn: Vec<String>,
    this_turn: Vec<String>,
    /// Whether this turn may be a repeat to fold: the turn before was a
    /// repeat, and this one has said the same so far and not slept. Its
    /// lines wait in `held` until it is over or says something new.
    holding: bool,
    held: Vec<String>,
    slept: bool,
    /// Repeats not shown, and the number and time of the last one.
    folded: u64,
    last_folded: (u64, f64),
    /// The time of the last line.
    last_time: f64,
}

impl Fold {
    /// `text`, the whole line, whose `what` was said at `time`.
    pub(super) fn line(&mut self, what: &str, text: String, time: f64) {
        self.last_time = time;
        self.this_turn.push(without_times(what));
        if self.holding && self.last_turn.starts_with(&self.this_turn) {
            self.held.push(text);
            return;
        }
        self.show_held();
        send(text);
    }

    /// A turn that sleeps is never folded: a loop that waits says why while
    /// it waits.
    pub(super) fn sleeps(&mut self) {
        self.slept = true;
        self.show_held();
    }

    /// Turn `turn` is over: a repeat to fold, or one to show.
    pub(super) fn turn_ends(&mut self, turn: u64) {
        let repeat = !self.slept
            && !self.this_turn.is_empty()
            && self.this_turn == self.last_turn;
        if self.holding && repeat {
            self.folded += 1;
            self.last_folded = (turn, self.last_time);
            self.held.clear();
        } else {
            self.show_held();
        }
        self.holding = repeat;
        self.slept = false;
        std::mem::swap(&mut self.last_turn, &mut self.this_turn);
        self.this_turn.clear();
    }

    /// Shows the repeats folded so far, then the lines held back.
    pub(super) fn show_held(&mut self) {
        self.holding = false;
        if self.folded > 0 {
            let (turn, time) = self.last_folded;
            send(format!(
                "[+{time:.3} s] turn {turn}: … {} more turns like this\n",
                thousands(self.folded)
            ));
            self.folded = 0;
        }
        for text in self.held.drain(..) {
            send(text);
        }
    }
}

/// `what` with its times (numbers with a decimal point) as `#`: what two
/// repeats of a turn have in common.
fn without_times(what: &str) -> String {
    let mut hidden = String::with_capacity(what.len());
    let mut number = String::new();
    for c in what.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) {
            number.push(c);
            continue;
        }
        hidden.push_str(if number.contains('.') { "#" } else { &number });
        number.clear();
        hidden.push(c);
    }
    hidden.pop();
    hidden
}
