//! How a step folder differs from the authors' version, tried on a copy
//! of step 1.

use std::path::{Path, PathBuf};

use super::*;
use crate::commands::start::start;
use crate::commands::status::{fingerprint, step_status};
use crate::commands::write;

/// A workshop of one step, step 1, copied from this one with its stored
/// authors' version, in a folder of its own.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let from = crate::workspace_root();
        let root = std::env::temp_dir()
            .join(format!("workshop-unit-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let folder = "step01-while-loop";
        let stored = authors::read_stored(&from, folder).expect("step 1's copy");
        for (file, text) in &stored {
            write(&root.join(folder).join(file), text).unwrap();
        }
        write(
            &authors::stored_copy(&root, folder),
            &authors::encode(folder, &stored),
        )
        .unwrap();
        fs::copy(from.join("Cargo.toml"), root.join("Cargo.toml")).unwrap();
        Scratch { root }
    }

    fn step(&self) -> Step {
        Step::find(&self.root, "1").expect("step 1")
    }

    fn edit(&self, file: &Path, from: &str, to: &str) {
        let path = self.step().dir().join(file);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from:?} is not in {}", path.display());
        fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

#[test]
fn an_edit_beside_the_track_is_named_before_any_function_is_blamed() {
    let scratch = Scratch::new("beside");
    assert_eq!(before_blaming(&scratch.step()), None);
    scratch.edit(
        Path::new("src/main.rs"),
        "println!(",
        "println!(\"mine\");\n    println!(",
    );
    let said = before_blaming(&scratch.step()).expect("main.rs is named");
    assert!(
        said.contains("step01-while-loop/src/main.rs: line")
            && said.contains(" outside the marked functions")
            && said.contains(": println!(\"mine\");"),
        "{said}"
    );
    assert!(said.contains("`cargo workshop diff 1`"), "{said}");
    assert!(
        said.contains("`cargo workshop reset 1 src/main.rs` puts it back"),
        "{said}"
    );
}

#[test]
fn a_signature_written_otherwise_is_the_functions_not_a_line_beside_it() {
    let scratch = Scratch::new("signature");
    let lib = Path::new("src/lib.rs");
    // A participant's own name for the argument, and the body to suit.
    scratch.edit(
        lib,
        "pub fn push(&mut self, callback: Callback)",
        "pub fn push(&mut self, job: Callback)",
    );
    let text = scratch.step().read("src/lib.rs");
    let at = text.find("pub fn push").expect("push");
    let body = at + text[at..].find('{').expect("its body");
    let renamed = text[body..].replacen("callback", "job", 1);
    fs::write(
        scratch.step().dir().join(lib),
        format!("{}{renamed}", &text[..body]),
    )
    .unwrap();
    assert_eq!(before_blaming(&scratch.step()), None);
    let change = changes(&scratch.step())
        .into_iter()
        .find(|change| change.file == "src/lib.rs")
        .expect("lib.rs changed");
    assert_eq!(
        change.what,
        What::Changed {
            written: vec!["`EventLoop::push`".to_owned()],
            outside: Outside::Same,
        }
    );
}

#[test]
fn the_names_of_changed_files_say_what_changed_but_not_how() {
    let scratch = Scratch::new("names");
    let step = scratch.step();
    assert!(diff(&step, &[], true).is_empty());
    scratch.edit(Path::new("src/lib.rs"), "self.ready", "self.ready ");
    let names = diff(&step, &[], true);
    assert_eq!(
        names, "step01-while-loop/src/lib.rs: your `EventLoop::push`\n",
        "{names:?}"
    );
    assert!(diff(&step, &["src/main.rs".to_owned()], true).is_empty());
}

#[test]
fn done_holds_only_while_nothing_in_the_step_changes() {
    let scratch = Scratch::new("done");
    let step = scratch.step();
    start(&step, false).expect("step 1 starts");
    // What `check` notes when the step passes.
    write(&step.state().join("passed"), &fingerprint(&step)).unwrap();
    assert_eq!(step_status(&step).unwrap(), "done: check passes");
    scratch.edit(
        Path::new("src/main.rs"),
        "println!(",
        "println!(\"mine\");\n    println!(",
    );
    let status = step_status(&step).unwrap();
    assert!(status.starts_with("started: 0 of"), "{status}");
}

/// Step 1 started, `EventLoop::push` written (not the authors' body), and
/// `lib.rs` then edited by `edit`.
fn started_with_push_written(name: &str, edit: impl Fn(&str) -> String) -> Scratch {
    let scratch = Scratch::new(name);
    start(&scratch.step(), false).expect("step 1 starts");
    let lib = scratch.step().dir().join("src/lib.rs");
    let text = fs::read_to_string(&lib).unwrap();
    let at = text
        .find("todo!(\"write `EventLoop::push`")
        .expect("push is blank");
    let end = at + text[at..].find('\n').unwrap();
    let written = format!(
        "{}self.ready.push_back(callback).map_err(|_| QueueFull){}",
        &text[..at],
        &text[end..]
    );
    fs::write(&lib, edit(&written)).unwrap();
    scratch
}

#[test]
fn spacing_a_bom_a_use_line_and_backup_files_never_stop_the_blame() {
    type Edit = fn(&str) -> String;
    let edits: [(&str, Edit); 5] = [
        ("blank-line", |text| format!("{text}\n")),
        ("spaces", |text| {
            text.replace("pub struct QueueFull;", "pub struct QueueFull;   ")
        }),
        ("bom", |text| format!("\u{feff}{text}")),
        ("use", |text| {
            text.replacen(
                "use std::fmt;",
                "use std::fmt;\nuse std::collections::VecDeque;",
                1,
            )
        }),
        ("comment", |text| {
            text.replacen(
                "pub struct QueueFull;",
                "// mine\npub struct QueueFull;",
                1,
            )
        }),
    ];
    for (name, edit) in edits {
        let scratch = started_with_push_written(name, edit);
        let step = scratch.step();
        assert_eq!(before_blaming(&step), None, "{name}");
        assert!(step.track().is_ok(), "{name}");
    }
    let scratch = started_with_push_written("backups", str::to_owned);
    let src = scratch.step().dir().join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    for backup in [
        "lib.rs~",
        "#lib.rs#",
        ".lib.rs.swp",
        "lib.rs.bak",
        "lib_old.rs",
    ] {
        fs::write(src.join(backup), &lib).unwrap();
    }
    let step = scratch.step();
    assert_eq!(before_blaming(&step), None);
    assert_eq!(
        step.track()
            .expect("lib_old.rs's markers do not count")
            .len(),
        2
    );
    // `status` counts the participant's own file, not the editor's.
    let added: Vec<String> = changes(&step)
        .into_iter()
        .filter(FileChange::is_outside_track)
        .map(|change| change.file)
        .collect();
    assert_eq!(added, ["src/lib_old.rs"]);
}

#[test]
fn code_changed_beside_written_functions_is_named_by_line_never_reset_away() {
    let scratch = started_with_push_written("code", |text| {
        text.replacen(
            "pub struct QueueFull;",
            "pub struct QueueFull;\nconst MINE: u8 = 1;",
            1,
        )
    });
    let said = before_blaming(&scratch.step()).expect("the line is named");
    let line = scratch
        .step()
        .read("src/lib.rs")
        .lines()
        .position(|l| l.contains("MINE"))
        .unwrap()
        + 1;
    assert!(
        said.contains(&format!(
            "src/lib.rs: your `EventLoop::push` and line {line} outside"
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("    {line}: const MINE: u8 = 1;")),
        "{said}"
    );
    assert!(
        !said.contains("reset 1 src/lib.rs"),
        "a reset would lose push:\n{said}"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_named_with_its_line() {
    let scratch = started_with_push_written("latin1", |text| {
        text.replacen("pub struct QueueFull;", "// cafe\npub struct QueueFull;", 1)
    });
    let lib = scratch.step().dir().join("src/lib.rs");
    let text = fs::read_to_string(&lib).unwrap();
    let line = text.lines().position(|l| l == "// cafe").unwrap() + 1;
    // `café` as Latin-1 writes it: one byte, 0xE9, that UTF-8 does not allow.
    let latin1 = text
        .replacen("// cafe", "// caf\u{1}", 1)
        .replace('\u{1}', "\u{e9}");
    let bytes: Vec<u8> = latin1
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    fs::write(&lib, bytes).unwrap();
    let said = scratch.step().track().expect_err("not UTF-8");
    assert!(
        said.contains(&format!("src/lib.rs is not UTF-8 text: line {line} ")),
        "{said}"
    );
}

#[test]
fn notes_around_a_blank_function_are_work() {
    let scratch = Scratch::new("notes");
    let step = scratch.step();
    start(&step, false).expect("step 1 starts");
    for (from, to) in [
        (
            "pub fn push(",
            "// MY PLAN: push_back, and QueueFull when full\n    pub fn push(",
        ),
        (
            "pub fn push(&mut self, callback: Callback)",
            "pub fn push(&mut self, job: Callback)",
        ),
    ] {
        let before = step.read("src/lib.rs");
        scratch.edit(Path::new("src/lib.rs"), from, to);
        let change = changes(&step)
            .into_iter()
            .find(|c| c.file == "src/lib.rs")
            .unwrap();
        assert!(change.is_work(), "{to}");
        assert_eq!(change.describe(), "your `EventLoop::push`");
        let status = step_status(&step).unwrap();
        assert!(status.contains("1 in progress"), "{status}");
        assert!(
            start(&step, false)
                .unwrap_err()
                .contains("`EventLoop::push`")
        );
        fs::write(step.dir().join("src/lib.rs"), before).unwrap();
    }
}
