//! What `watch`'s screen shows of its state: the head (what is watched,
//! the progress, the keys, the status line, the verdict's headline) and
//! the body paged under it; or, without a screen, the verdict as lines.

use std::io::Write;

use super::{Next, Overlay, Watch, layout, screen};

/// Whether watch redraws one screen: on a terminal that takes the escape
/// codes that clear it. `TERM=dumb` (an editor's shell pane, a plain
/// console) prints each verdict as lines instead.
pub(super) fn draws_a_screen(
    is_terminal: bool,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    is_terminal && term.is_none_or(|term| term != "dumb")
}

impl Watch {
    /// The function the last verdict names, if any.
    fn named(&self) -> Option<&str> {
        self.verdict.as_ref().and_then(|v| v.next.as_deref())
    }

    /// The progress line, or why the track cannot be read.
    fn progress(&self) -> String {
        match self.step.stages() {
            Ok(stages) => screen::progress(&stages, self.named()),
            Err(err) => err.lines().next().unwrap_or_default().to_owned(),
        }
    }

    /// The panel open, if any; none when the track cannot be read (the
    /// verdict says what to mend).
    pub(super) fn overlay_text(&self) -> String {
        let Ok(stages) = self.step.stages() else {
            return String::new();
        };
        let hand = screen::at_hand(&stages, self.named());
        match self.overlay {
            Overlay::None => String::new(),
            Overlay::Hint => screen::hint(&self.step, hand),
            Overlay::List => screen::list(&stages, hand),
        }
    }

    fn status(&self) -> String {
        if let Some(running) = &self.running {
            let seconds = running.began.elapsed().as_secs();
            return format!("Checking ({seconds} s): {}", self.said.trim());
        }
        if !self.said.is_empty() {
            return self.said.clone(); // a save ended the check: waiting
        }
        self.verdict
            .as_ref()
            .map_or_else(String::new, |verdict| verdict.checked.clone())
    }

    /// The head, always on screen: what is watched, the progress, the
    /// keys, the status line and the verdict's headline (its first
    /// paragraph: the function, what to do). And the body, paged under
    /// it: a panel (`h`, `l`) first, then the rest of the verdict.
    fn head_and_body(&self) -> (String, String) {
        let mut head = format!(
            "cargo workshop watch {n}: {folder}, checked again on each save\n\
             Progress: {progress}\n{keys}\n\n{status}",
            n = self.step.number,
            folder = self.step.folder,
            progress = self.progress(),
            keys = screen::keys(self.raw),
            status = self.status(),
        );
        let mut body = self.overlay_text();
        if let Some(verdict) = &self.verdict {
            head.push_str("\n\n");
            // Under a check that runs, the verdict shown is the old one: a
            // glance must not take a pass from before the save for news.
            if self.running.is_some() || !self.said.is_empty() {
                head.push_str("The last verdict, from before your save:\n");
            }
            let (headline, rest) = verdict
                .text
                .split_once("\n\n")
                .unwrap_or((verdict.text.as_str(), ""));
            head.push_str(headline);
            if !body.is_empty() && !rest.is_empty() {
                body.push_str("\n\n");
            }
            body.push_str(rest);
        }
        (head, body)
    }

    fn page(&self) -> layout::Page {
        let (width, height) = crate::commands::terminal_size();
        let (head, body) = self.head_and_body();
        layout::layout(&head, &body, self.scroll, height, width)
    }

    /// Space (or Page Down) the next page, b (or Page Up) the one before.
    pub(super) fn turn_page(&mut self, forward: bool) -> Next {
        let page = self.page();
        self.scroll = if forward {
            page.first + page.size
        } else {
            page.first.saturating_sub(page.size)
        };
        // Past the end, the layout shows the last page: keep where it is.
        self.scroll = self.page().first;
        Next::Redraw
    }

    pub(super) fn draw(&self) {
        if !self.fancy || self.demo_ended.is_some() {
            return;
        }
        let screen = self.page().lines.join("\n");
        // Raw mode leaves output processing on: "\n" still starts a line.
        // No newline after the last: at the last line, it would scroll the
        // head off the top.
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\x1b[H\x1b[2J{screen}");
        let _ = out.flush();
    }

    pub(super) fn plain_verdict(&self) -> String {
        let Some(verdict) = &self.verdict else {
            return String::new();
        };
        format!(
            "--- step {}: {} ({})\n{}\n",
            self.step.number,
            self.progress(),
            self.status(),
            verdict.text
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dumb_terminal_gets_plain_lines_without_escape_codes() {
        use std::ffi::OsStr;
        assert!(draws_a_screen(true, Some(OsStr::new("xterm-256color"))));
        assert!(draws_a_screen(true, None));
        assert!(!draws_a_screen(true, Some(OsStr::new("dumb"))));
        assert!(!draws_a_screen(false, Some(OsStr::new("xterm"))));
    }
}
