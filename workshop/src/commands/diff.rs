//! `cargo workshop diff N [FILE...]`: how step N's folder differs from the
//! authors' version; with `--names`, only which files and what in each.

use std::path::Path;
use std::process::ExitCode;

use crate::changes;
use crate::commands::{Words, step_file};
use crate::step::{Step, find_root};

pub const HELP: &str = "usage: cargo workshop diff N [FILE...] [--names]\n\n\
             Shows how step N's folder (or these files of it) differs from \
             the authors'\nversion: a unified diff per changed, deleted or \
             added file. With --names,\nonly which files differ and what \
             changed in each (your functions, other\nlines), without the \
             authors' text.";

pub fn run(here: &Path, args: &[&str]) -> Result<ExitCode, String> {
    let words = Words::parse(args, &["--names"], HELP)?;
    let (n, files) = words.step_and_rest("diff", HELP)?;
    let step = Step::find(&find_root(here)?, n)?;
    let files: Vec<String> = files
        .iter()
        .map(|file| step_file(&step, here, file))
        .collect();
    if let Some(unknown) = files.iter().find(|file| {
        !step.authors.contains_key(*file) && !step.dir().join(file).exists()
    }) {
        return Err(format!(
            "{}/{unknown} is neither the authors' nor yours: name files from \
             the step folder (src/lib.rs) or from where you are \
             ({}/src/lib.rs from the workshop's folder)",
            step.folder, step.folder
        ));
    }
    let shown = changes::diff(&step, &files, words.has("--names"));
    if !shown.is_empty() {
        print!("{shown}");
    } else if files.is_empty() {
        println!("Step {} is as the authors wrote it.", step.number);
    } else {
        let named: Vec<String> = files
            .iter()
            .map(|file| format!("{}/{file}", step.folder))
            .collect();
        let (is, it) = if named.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        println!("{} {is} as the authors wrote {it}.", named.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
